package retrieval

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/viterin/vek/vek32"

	"github.com/toolsmith/toolsmith/graph"
)

// FoundEntity is an entity recognised in a query or its context.
type FoundEntity struct {
	Key  string `json:"key"`
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
	// Match is "name", "alias" or "embedding"; Matched is the text that matched.
	Match   string  `json:"match"`
	Matched string  `json:"matched"`
	Score   float64 `json:"score"`
}

// vocabulary is the entity vocabulary with the embeddings of entity names,
// built once and dropped on any tool change (Invalidate).
type vocabulary struct {
	entities []graph.Entity
	phrases  map[string][]int // normalised name/alias → entity indexes
	vecs     [][]float32      // unit embeddings of entity names, by index
	// withEntities are the tools ABOUT any entity (for damping).
	withEntities map[string]bool
}

// normPhrase lower-cases and collapses text into space-separated word
// tokens, with a leading and trailing space so that phrase containment
// respects word boundaries.
func normPhrase(s string) string {
	var b strings.Builder
	b.WriteByte(' ')
	prevSpace := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			prevSpace = false
		} else if !prevSpace {
			b.WriteByte(' ')
			prevSpace = true
		}
	}
	if !prevSpace {
		b.WriteByte(' ')
	}
	return b.String()
}

func (s *Service) vocabulary(ctx context.Context) (*vocabulary, error) {
	s.vocabMu.Lock()
	defer s.vocabMu.Unlock()
	if s.vocab != nil {
		return s.vocab, nil
	}
	ents, err := s.store.Entities(ctx)
	if err != nil {
		return nil, fmt.Errorf("retrieval: entities: %w", err)
	}
	v := &vocabulary{entities: ents, phrases: map[string][]int{}, withEntities: map[string]bool{}}
	names := make([]string, len(ents))
	keys := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name
		keys[i] = e.Key
		for _, p := range append([]string{e.Name}, e.Aliases...) {
			if np := normPhrase(p); strings.TrimSpace(np) != "" {
				v.phrases[np] = append(v.phrases[np], i)
			}
		}
	}
	if len(ents) > 0 {
		if s.opts.EntityThreshold > 0 {
			vecs, err := s.emb.EmbedDocuments(ctx, names)
			if err != nil {
				return nil, fmt.Errorf("retrieval: embed entity names: %w", err)
			}
			for i := range vecs {
				vecs[i] = graph.Normalize(vecs[i])
			}
			v.vecs = vecs
		}
		// Every tool ABOUT some entity, whatever the caller: only used to
		// decide damping of candidates the caller already may see.
		hits, err := s.store.ToolsNearEntities(ctx, keys, 1, graph.Filter{})
		if err != nil {
			return nil, fmt.Errorf("retrieval: tools near entities: %w", err)
		}
		for _, h := range hits {
			v.withEntities[h.ToolID] = true
		}
	}
	s.vocab = v
	return v, nil
}

// Entities names the catalogue's entities that text mentions (by name,
// alias or embedding similarity), in vocabulary order.
func (s *Service) Entities(ctx context.Context, text string) ([]string, error) {
	v, err := s.vocabulary(ctx)
	if err != nil {
		return nil, err
	}
	found, err := s.extractEntities(ctx, v, []string{text})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(found))
	for _, f := range found {
		out = append(out, f.Name)
	}
	return out, nil
}

// extractEntities finds entities in text by name/alias phrase match and by
// embedding similarity of the text's chunks (the query and the context
// separately) to entity names.
func (s *Service) extractEntities(ctx context.Context, v *vocabulary, texts []string) ([]FoundEntity, error) {
	best := map[int]FoundEntity{}
	add := func(i int, fe FoundEntity) {
		if old, ok := best[i]; !ok || fe.Score > old.Score {
			best[i] = fe
		}
	}
	for _, t := range texts {
		nt := normPhrase(t)
		for p, idxs := range v.phrases {
			if !strings.Contains(nt, p) {
				continue
			}
			for _, i := range idxs {
				e := v.entities[i]
				kind := "alias"
				if normPhrase(e.Name) == p {
					kind = "name"
				}
				add(i, FoundEntity{Key: e.Key, Name: e.Name, Type: e.Type, Match: kind, Matched: strings.TrimSpace(p), Score: 1})
			}
		}
		if len(v.vecs) == 0 || strings.TrimSpace(t) == "" {
			continue
		}
		qv, err := s.queryVector(ctx, t)
		if err != nil {
			return nil, err
		}
		for i, ev := range v.vecs {
			// Both vectors are unit length: the dot product is the cosine.
			if c := float64(vek32.Dot(qv, ev)); c >= s.opts.EntityThreshold {
				e := v.entities[i]
				add(i, FoundEntity{Key: e.Key, Name: e.Name, Type: e.Type, Match: "embedding", Matched: t, Score: c})
			}
		}
	}
	out := make([]FoundEntity, 0, len(best))
	for i := range v.entities { // vocabulary order: deterministic
		if fe, ok := best[i]; ok {
			out = append(out, fe)
		}
	}
	return out, nil
}

// addEntities runs entity disambiguation: entities found in the
// query and context boost the tools reachable from them (1/depth, scaled by
// the match score), and damp the tools that are about entities but about
// none of the found ones (tied only to conflicting entities).
func (s *Service) addEntities(ctx context.Context, q Query, f graph.Filter, cands map[string]*candidate, get func(graph.ToolSummary) *candidate) ([]FoundEntity, error) {
	v, err := s.vocabulary(ctx)
	if err != nil {
		return nil, err
	}
	if len(v.entities) == 0 {
		return []FoundEntity{}, nil
	}
	texts := []string{q.Text}
	if q.Context != "" {
		texts = append(texts, q.Context)
	}
	found, err := s.extractEntities(ctx, v, texts)
	if err != nil {
		return nil, err
	}
	if found, err = s.seenEntities(ctx, q, found); err != nil || len(found) == 0 {
		return found, err
	}
	scoreOf := map[string]float64{}
	keys := make([]string, 0, len(found))
	for _, fe := range found {
		keys = append(keys, fe.Key)
		scoreOf[fe.Key] = fe.Score
	}
	hits, err := s.store.ToolsNearEntities(ctx, keys, 2, f)
	if err != nil {
		return nil, fmt.Errorf("retrieval: tools near entities: %w", err)
	}
	near := map[string]bool{}
	for _, h := range hits {
		near[h.ToolID] = true
		t, err := s.store.GetTool(ctx, h.ToolID)
		if err != nil {
			return nil, fmt.Errorf("retrieval: entity tool %q: %w", h.ToolID, err)
		}
		if !visible(f, &t.ToolSummary) {
			continue
		}
		c := get(t.ToolSummary)
		boost := scoreOf[h.EntityKey] / float64(max(h.Depth, 1))
		if boost > c.graph {
			c.graph = boost
		}
		c.entities = append(c.entities, h.EntityKey)
	}
	// Damp only candidates already gathered: damping never adds a tool.
	for id, c := range cands {
		if v.withEntities[id] && !near[id] {
			c.graph = -0.5
		}
	}
	return found, nil
}

// seenEntities keeps the found entities that some tool the caller may
// execute is directly about. The vocabulary holds every tool's entities,
// whoever asks; an entity that only tools hidden from the caller bring
// would name what those tools are about, so it is neither shown nor used
// to boost (a caller never learns of a tool it cannot execute).
func (s *Service) seenEntities(ctx context.Context, q Query, found []FoundEntity) ([]FoundEntity, error) {
	kept := make([]FoundEntity, 0, len(found))
	for _, fe := range found {
		// One traversal per entity: ToolsNearEntities names each tool once,
		// with one of its entities, so a joint query could miss an entity
		// whose tool another entity already reached. Found entities are few.
		hits, err := s.store.ToolsNearEntities(ctx, []string{fe.Key}, 1, q.Caller.Filter())
		if err != nil {
			return nil, fmt.Errorf("retrieval: tools about entity %q: %w", fe.Key, err)
		}
		if len(hits) > 0 {
			kept = append(kept, fe)
		}
	}
	return kept, nil
}
