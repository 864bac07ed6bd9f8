package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// prepare validates t and fills its defaults, as the SQLite store does.
func (s *Store) prepare(ctx context.Context, t graph.Tool) (graph.Tool, error) {
	if strings.TrimSpace(t.ID) == "" {
		return t, fmt.Errorf("neo4j: upsert: empty tool id: %w", fault.ErrInvalid)
	}
	if t.Status == "" {
		t.Status = graph.StatusActive
	}
	if !graph.ValidStatus(t.Status) {
		return t, fmt.Errorf("neo4j: upsert %q: status %q: %w", t.ID, t.Status, fault.ErrInvalid)
	}
	for _, r := range t.Relations {
		switch r.Kind {
		case graph.RelDependsOn, graph.RelAlternative, graph.RelPairsWith:
		default:
			return t, fmt.Errorf("neo4j: upsert %q: relation kind %q: %w", t.ID, r.Kind, fault.ErrInvalid)
		}
		if r.Target == "" {
			return t, fmt.Errorf("neo4j: upsert %q: relation %s without target: %w", t.ID, r.Kind, fault.ErrInvalid)
		}
	}
	for _, e := range t.Entities {
		if strings.TrimSpace(e.Name) == "" {
			return t, fmt.Errorf("neo4j: upsert %q: entity without name: %w", t.ID, fault.ErrInvalid)
		}
	}
	if len(t.Manifest) > 0 && !json.Valid(t.Manifest) {
		return t, fmt.Errorf("neo4j: upsert %q: manifest is not valid JSON: %w", t.ID, fault.ErrInvalid)
	}
	if t.Embedding != nil {
		if err := s.checkDim(ctx, fmt.Sprintf("upsert %q", t.ID), t.Embedding); err != nil {
			return t, err
		}
	}
	return t, nil
}

// UpsertTool writes t, its nodes, edges, embedding and full-text fields and a
// new revision in one write transaction: all or nothing.
func (s *Store) UpsertTool(ctx context.Context, in graph.Tool) (graph.UpsertResult, error) {
	t, err := s.prepare(ctx, in)
	if err != nil {
		return graph.UpsertResult{}, err
	}
	var res graph.UpsertResult
	var at int64
	err = s.r.write(ctx, func(tx txRunner) error {
		var err error
		res, at, err = s.upsertTx(ctx, tx, t)
		return err
	})
	if err != nil {
		return graph.UpsertResult{}, wrapErr(fmt.Sprintf("upsert %q", t.ID), err)
	}
	s.follow.saw(t.ID, at)
	s.staleMean()
	return res, nil
}

// upsertTx performs the writes of one tool inside tx. It may run more than
// once (the driver retries transient failures), so it only reads t.
func (s *Store) upsertTx(ctx context.Context, tx txRunner, t graph.Tool) (graph.UpsertResult, int64, error) {
	recs, err := tx.run(ctx, cypherToolState, map[string]any{"id": t.ID})
	if err != nil {
		return graph.UpsertResult{}, 0, fmt.Errorf("read: %w", err)
	}
	var rev, created int64
	exists := false
	if len(recs) == 1 && recs[0]["revision"] != nil {
		exists = true
		if rev, err = getInt(recs[0], "revision"); err != nil {
			return graph.UpsertResult{}, 0, fmt.Errorf("read: %w", err)
		}
		if created, err = getInt(recs[0], "createdAt"); err != nil {
			return graph.UpsertResult{}, 0, fmt.Errorf("read: %w", err)
		}
	}
	now := graph.Nanos(s.now().UTC())
	if !exists {
		created = now
	}
	rev++
	t.CreatedAt = graph.FromNanos(created)
	t.UpdatedAt = graph.FromNanos(now)
	sumJSON, err := json.Marshal(graph.CloneSummary(t.ToolSummary))
	if err != nil {
		return graph.UpsertResult{}, 0, fmt.Errorf("encode summary: %w", err)
	}
	rec := t
	rec.Embedding = nil
	recJSON, err := json.Marshal(rec)
	if err != nil {
		return graph.UpsertResult{}, 0, fmt.Errorf("encode record: %v: %w", err, fault.ErrInvalid)
	}

	// Entities: keys, type entities and the text the full-text index sees.
	entityNames := make([]string, 0, len(t.Entities))
	entities := make([]map[string]any, 0, len(t.Entities))
	for _, e := range t.Entities {
		key := graph.EntityKey(e.Name)
		types := []map[string]any{}
		if tk := graph.EntityKey(e.Type); tk != "" && tk != key {
			types = append(types, map[string]any{"key": tk, "name": strings.TrimSpace(e.Type)})
		}
		aliases := []string{}
		seenAlias := map[string]bool{}
		for _, a := range e.Aliases {
			// One alias per alias key, the first written form kept.
			if ak := graph.EntityKey(a); ak != "" && !seenAlias[ak] {
				seenAlias[ak] = true
				aliases = append(aliases, strings.TrimSpace(a))
			}
		}
		entities = append(entities, map[string]any{
			"key": key, "name": strings.TrimSpace(e.Name), "type": strings.TrimSpace(e.Type),
			"aliases": aliases, "types": types,
		})
		entityNames = append(entityNames, e.Name)
		entityNames = append(entityNames, e.Aliases...)
	}

	props := map[string]any{
		"verb":         t.Verb,
		"category":     t.Category,
		"module":       t.Module,
		"status":       t.Status,
		"revision":     rev,
		"summary":      string(sumJSON),
		"record":       string(recJSON),
		"embedding":    vectorParam(t.Embedding),
		"createdAt":    created,
		"updatedAt":    now,
		"name":         t.Name,
		"verbText":     graph.VerbText(t.Verb),
		"description":  t.ShortDescription + "\n" + t.Description,
		"tagsText":     strings.TrimSpace(strings.Join(t.Tags, " ") + " " + t.ParamsText),
		"useCasesText": strings.Join(t.UseCases, "\n"),
		"entitiesText": strings.Join(entityNames, "\n"),
	}
	id := map[string]any{"id": t.ID}
	steps := []step{
		{"merge", cypherMergeTool, map[string]any{"id": t.ID, "props": props}},
		{"clear edges", cypherDeleteToolEdges, id},
		{"nodes", cypherLinkNodes, map[string]any{
			"id":         t.ID,
			"verbs":      nonEmpty(t.Verb),
			"categories": nonEmpty(t.Category),
			"tags":       nonEmpty(t.Tags...),
			"groups":     nonEmpty(t.Groups...),
			"modules":    nonEmpty(t.Module),
		}},
	}
	if len(entities) > 0 {
		steps = append(steps, step{"entities", cypherLinkEntities, map[string]any{"id": t.ID, "entities": entities}})
	}
	// Tool-to-tool relations, one statement per kind; a repeated (kind,
	// target) keeps the last score and sequence, as the SQLite store's ON
	// CONFLICT does.
	relCypher := map[graph.RelKind]string{
		graph.RelDependsOn:   cypherLinkDependsOn,
		graph.RelAlternative: cypherLinkAlternatives,
		graph.RelPairsWith:   cypherLinkPairs,
	}
	rels := map[graph.RelKind][]map[string]any{}
	at := map[graph.Relation]int{}
	for _, r := range t.Relations {
		m := map[string]any{"target": r.Target, "score": r.Score, "sequence": r.Sequence}
		k := graph.Relation{Kind: r.Kind, Target: r.Target}
		if i, ok := at[k]; ok {
			rels[r.Kind][i] = m
			continue
		}
		at[k] = len(rels[r.Kind])
		rels[r.Kind] = append(rels[r.Kind], m)
	}
	for _, kind := range []graph.RelKind{graph.RelDependsOn, graph.RelAlternative, graph.RelPairsWith} {
		if len(rels[kind]) > 0 {
			steps = append(steps, step{"relations " + string(kind), relCypher[kind], map[string]any{"id": t.ID, "rels": rels[kind]}})
		}
	}
	steps = append(steps, step{"revision", cypherAppendRevision, map[string]any{
		"id": t.ID, "revision": rev, "status": t.Status, "reason": "",
		"manifest": manifestParam(t.Manifest), "at": now,
	}})
	for _, st := range steps {
		if _, err := tx.run(ctx, st.cypher, st.params); err != nil {
			return graph.UpsertResult{}, 0, fmt.Errorf("%s: %w", st.name, err)
		}
	}
	return graph.UpsertResult{Created: !exists, Revision: int(rev)}, now, nil
}

// step is one named statement of a write transaction.
type step struct {
	name   string
	cypher string
	params map[string]any
}

// nonEmpty returns the non-empty strings of xs, never nil.
func nonEmpty(xs ...string) []string {
	out := []string{}
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// manifestParam is the manifest as a string, or nil when absent.
func manifestParam(m json.RawMessage) any {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return string(m)
}

// GetTool returns the full record of a tool, whatever its status.
func (s *Store) GetTool(ctx context.Context, id string) (graph.Tool, error) {
	var t graph.Tool
	found := false
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetTool, map[string]any{"id": id})
		if err != nil {
			return err
		}
		found = len(recs) > 0
		if !found {
			return nil
		}
		rec, err := getString(recs[0], "record")
		if err != nil {
			return err
		}
		t = graph.Tool{}
		if err := json.Unmarshal([]byte(rec), &t); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		t.Embedding, err = getVector(recs[0], "embedding")
		return err
	})
	if err != nil {
		return graph.Tool{}, wrapErr(fmt.Sprintf("get tool %q", id), err)
	}
	if !found {
		return graph.Tool{}, fmt.Errorf("neo4j: get tool %q: %w", id, fault.ErrNotFound)
	}
	if string(t.Manifest) == "null" {
		t.Manifest = nil
	}
	return t, nil
}

// manifestPage is how many records one ManifestRunes statement returns.
const manifestPage = 1000

// ManifestRunes returns every tool's manifest size in runes, paging
// through the records in one read transaction. Core Cypher cannot parse
// the record, and the revision's copy of the manifest is the text as
// registered, not as the record (and so GetTool) has it, so the manifest
// is cut out of each record here: no embedding and no second round trip
// per tool.
func (s *Store) ManifestRunes(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	err := s.r.read(ctx, func(tx txRunner) error {
		clear(out) // a retried transaction starts again
		after := ""
		for {
			recs, err := tx.run(ctx, cypherManifestRecords, map[string]any{"after": after, "limit": int64(manifestPage)})
			if err != nil {
				return err
			}
			for _, r := range recs {
				id, err := getString(r, "id")
				if err != nil {
					return err
				}
				rec, err := getString(r, "record")
				if err != nil {
					return err
				}
				var t struct {
					Manifest json.RawMessage `json:"manifest"`
				}
				if err := json.Unmarshal([]byte(rec), &t); err != nil {
					return fmt.Errorf("decode %q: %w", id, err)
				}
				n := 0
				if string(t.Manifest) != "null" {
					n = utf8.RuneCount(t.Manifest)
				}
				out[id] = n
				after = id
			}
			if len(recs) < manifestPage {
				return nil
			}
		}
	})
	if err != nil {
		return nil, wrapErr("manifest runes", err)
	}
	return out, nil
}

// ListTools pages through summaries ordered by id.
func (s *Store) ListTools(ctx context.Context, q graph.ListQuery) (graph.ToolPage, error) {
	limit := graph.Limit(q.Limit, graph.DefaultListLimit, graph.MaxListLimit)
	var page graph.ToolPage
	err := s.r.read(ctx, func(tx txRunner) error {
		page = graph.ToolPage{Items: []graph.ToolSummary{}}
		recs, err := tx.run(ctx, cypherCountTools, filterParams(q.Filter, nil))
		if err != nil {
			return fmt.Errorf("count: %w", err)
		}
		if len(recs) == 1 {
			n, err := getInt(recs[0], "total")
			if err != nil {
				return err
			}
			page.Total = int(n)
		}
		// Fetch batches until limit+1 allowed items are seen (so Next is
		// exact) or the tools are exhausted.
		cursor := q.After
		batch := limit + 1
		for {
			recs, err := tx.run(ctx, cypherListTools, filterParams(q.Filter, map[string]any{"after": cursor, "limit": int64(batch)}))
			if err != nil {
				return err
			}
			for _, r := range recs {
				id, err := getString(r, "id")
				if err != nil {
					return err
				}
				cursor = id
				sum, ok, err := allowedSummary(r, q.Filter)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				if len(page.Items) == limit {
					page.Next = page.Items[len(page.Items)-1].ID
					return nil
				}
				page.Items = append(page.Items, sum)
			}
			if len(recs) < batch {
				return nil
			}
		}
	})
	if err != nil {
		return graph.ToolPage{}, wrapErr("list tools", err)
	}
	return page, nil
}

// SetStatus changes a tool's status and appends a revision with the reason.
func (s *Store) SetStatus(ctx context.Context, id, status, reason string) error {
	if !graph.ValidStatus(status) {
		return fmt.Errorf("neo4j: set status %q: status %q: %w", id, status, fault.ErrInvalid)
	}
	var at int64
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherSetStatusRead, map[string]any{"id": id})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fault.ErrNotFound
		}
		rev, err := getInt(recs[0], "revision")
		if err != nil {
			return err
		}
		recJSON, err := getString(recs[0], "record")
		if err != nil {
			return err
		}
		var t graph.Tool
		if err := json.Unmarshal([]byte(recJSON), &t); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		now := graph.Nanos(s.now().UTC())
		at = now
		rev++
		t.Status = status
		t.UpdatedAt = graph.FromNanos(now)
		sumJSON, err := json.Marshal(graph.CloneSummary(t.ToolSummary))
		if err != nil {
			return err
		}
		newRec, err := json.Marshal(t)
		if err != nil {
			return err
		}
		if _, err := tx.run(ctx, cypherSetStatus, map[string]any{
			"id": id, "status": status, "revision": rev, "summary": string(sumJSON),
			"record": string(newRec), "updatedAt": now,
		}); err != nil {
			return err
		}
		_, err = tx.run(ctx, cypherAppendRevision, map[string]any{
			"id": id, "revision": rev, "status": status, "reason": reason,
			"manifest": manifestParam(t.Manifest), "at": now,
		})
		return err
	})
	if err != nil {
		return wrapErr(fmt.Sprintf("set status %q", id), err)
	}
	s.follow.saw(id, at)
	s.staleMean()
	return nil
}

// History returns a tool's revisions, oldest first.
func (s *Store) History(ctx context.Context, id string) ([]graph.Revision, error) {
	var out []graph.Revision
	err := s.r.read(ctx, func(tx txRunner) error {
		out = nil
		recs, err := tx.run(ctx, cypherHistory, map[string]any{"id": id})
		if err != nil {
			return err
		}
		for _, r := range recs {
			var rv graph.Revision
			n, err := getInt(r, "revision")
			if err != nil {
				return err
			}
			rv.Revision = int(n)
			if rv.Status, err = getString(r, "status"); err != nil {
				return err
			}
			if rv.Reason, err = getString(r, "reason"); err != nil {
				return err
			}
			m, err := getString(r, "manifest")
			if err != nil {
				return err
			}
			if m != "" {
				rv.Manifest = json.RawMessage(m)
			}
			at, err := getInt(r, "at")
			if err != nil {
				return err
			}
			rv.At = graph.FromNanos(at)
			out = append(out, rv)
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("history %q", id), err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("neo4j: history %q: %w", id, fault.ErrNotFound)
	}
	return out, nil
}
