package cli

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/tool"
)

// The bench's catalogue beyond its source: large catalogues are mostly
// near-duplicates (an API's successive versions, its regional endpoints,
// the same operation described by another vendor), so when the source holds
// fewer tools than --tools, expandCatalogue adds seeded variants of the
// source's tools until the count: versions, regional copies and paraphrased
// summaries, each with its own id and name.

// variantSeed seeds every variant (with the variant's round and base index),
// so a catalogue is the same on every run and machine.
const variantSeed = 0x7001_5e17

// regions are the regional copies' endpoints.
var regions = []struct{ code, label string }{
	{"us-east", "US East (Virginia)"}, {"us-west", "US West (Oregon)"}, {"eu-west", "EU West (Ireland)"},
	{"eu-central", "EU Central (Frankfurt)"}, {"ap-south", "Asia Pacific (Mumbai)"}, {"ap-northeast", "Asia Pacific (Tokyo)"},
	{"ap-southeast", "Asia Pacific (Sydney)"}, {"ca-central", "Canada (Montreal)"}, {"sa-east", "South America (São Paulo)"},
	{"me-central", "Middle East (UAE)"}, {"af-south", "Africa (Cape Town)"}, {"uk-south", "UK South (London)"},
}

// versionNotes say what a later version of an operation changed.
var versionNotes = []string{
	"adds cursor pagination", "returns the extended fields", "accepts ISO 8601 timestamps",
	"drops the deprecated parameters", "supports partial responses", "adds idempotency keys",
	"returns localized messages", "is rate limited per tenant",
}

// synonyms rewrite a summary's words for the paraphrased copies; each
// applies with probability one half, so copies of one tool differ.
var synonyms = map[string][]string{
	"get": {"retrieve", "fetch", "obtain"}, "gets": {"retrieves", "fetches", "returns"},
	"list": {"enumerate", "show all", "browse"}, "lists": {"enumerates", "shows all", "returns every"},
	"create": {"add", "make", "register"}, "creates": {"adds", "makes", "registers"},
	"delete": {"remove", "erase", "drop"}, "deletes": {"removes", "erases", "drops"},
	"update": {"modify", "change", "edit"}, "updates": {"modifies", "changes", "edits"},
	"search": {"look up", "query", "find"}, "returns": {"gives back", "yields", "provides"},
	"retrieve": {"get", "fetch", "read"}, "retrieves": {"gets", "fetches", "reads"},
	"user": {"account", "member"}, "users": {"accounts", "members"},
	"information": {"details", "data"}, "details": {"information", "particulars"},
	"specified": {"given", "requested"}, "specific": {"particular", "given"},
	"all": {"every", "the full set of"}, "new": {"fresh", "additional"},
	"send": {"dispatch", "transmit"}, "check": {"verify", "inspect"},
	"file": {"document", "upload"}, "status": {"state", "condition"},
	"set": {"configure", "assign"}, "remove": {"delete", "take away"},
}

// paraphraseLeads open some paraphrased summaries.
var paraphraseLeads = []string{"", "", "Use this to ", "Lets you ", "An endpoint to ", "Call this to "}

// expandCatalogue returns base's first n tools, or base followed by variants
// of its tools up to n. Ids and names are distinct; the result depends on
// base and n only.
func expandCatalogue(base []tool.Manifest, n int) []tool.Manifest {
	if len(base) >= n || len(base) == 0 {
		return base[:min(n, len(base))]
	}
	out := make([]tool.Manifest, len(base), n)
	copy(out, base)
	ids := make(map[string]bool, n)
	names := make(map[string]bool, n)
	for _, m := range base {
		ids[m.ToolID], names[m.Name] = true, true
	}
	for round := 0; len(out) < n; round++ {
		for i := range base {
			if len(out) == n {
				break
			}
			rng := rand.New(rand.NewPCG(variantSeed, uint64(round)<<32|uint64(i)))
			v := variant(base[i], round, (round+i)%3, rng)
			v.ToolID = unique(ids, v.ToolID, tool.MaxToolIDLen, ".")
			v.Name = unique(names, v.Name, tool.MaxNameLen, " ")
			tool.Normalize(&v)
			if tool.Validate(&v) != nil {
				continue
			}
			out = append(out, v)
		}
	}
	return out
}

// unique returns s, or s with a counter when it is taken, within limit
// bytes, and marks it taken.
func unique(taken map[string]bool, s string, limit int, sep string) string {
	if len(s) > limit-8 {
		s = strings.ToValidUTF8(s[:limit-8], "")
	}
	c := s
	for k := 2; taken[c]; k++ {
		c = fmt.Sprintf("%s%s%d", s, sep, k)
	}
	taken[c] = true
	return c
}

// variant is one near-duplicate of m: kind 0 a later version, 1 a regional
// copy, 2 a paraphrase of its summary.
func variant(m tool.Manifest, round, kind int, rng *rand.Rand) tool.Manifest {
	v := m
	v.ShortDescription = ""
	id := m.ToolID
	if len(id) > 96 {
		id = strings.TrimRight(id[:96], ".-_")
	}
	switch kind {
	case 0:
		ver := 2 + round/3
		v.ToolID = fmt.Sprintf("%s.v%d", id, ver)
		v.Name = fmt.Sprintf("%s v%d", m.Name, ver)
		v.Description = fmt.Sprintf("%s (version %d: %s)", strings.TrimRight(m.Description, ". "), ver, versionNotes[rng.IntN(len(versionNotes))])
	case 1:
		// A tool's successive regional copies walk the regions; past the
		// last, they are numbered zones of them.
		g := round / 3
		r := regions[g%len(regions)]
		code, label := r.code, r.label
		if z := g / len(regions); z > 0 {
			code, label = fmt.Sprintf("%s-%d", code, z+1), fmt.Sprintf("%s, zone %d", label, z+1)
		}
		v.ToolID = id + "." + code
		v.Name = m.Name + " " + code
		v.Description = fmt.Sprintf("%s. Served from the %s region.", strings.TrimRight(m.Description, ". "), label)
	default:
		v.ToolID = fmt.Sprintf("%s.alt%d", id, round/3+1)
		v.Name = fmt.Sprintf("%s alt %d", m.Name, round/3+1)
		v.Description = paraphrase(m.Description, rng)
	}
	return v
}

// paraphrase rewrites text with seeded synonyms and an occasional lead-in;
// it keeps the text's meaning and most of its words, as a second vendor's
// summary of the same operation would.
func paraphrase(text string, rng *rand.Rand) string {
	out := rewrite(text, rng)
	if lead := paraphraseLeads[rng.IntN(len(paraphraseLeads))]; lead != "" && out != "" {
		out = lead + strings.ToLower(out[:1]) + out[1:]
	}
	if out == text {
		out = "In short: " + out
	}
	return out
}

// rewrite replaces some of text's words by synonyms.
func rewrite(text string, rng *rand.Rand) string {
	words := strings.Fields(text)
	for i, w := range words {
		core := strings.TrimRight(w, ".,;:")
		alts := synonyms[strings.ToLower(core)]
		if len(alts) == 0 || rng.IntN(2) == 0 {
			continue
		}
		alt := alts[rng.IntN(len(alts))]
		if i == 0 {
			alt = strings.ToUpper(alt[:1]) + alt[1:]
		}
		words[i] = alt + w[len(core):]
	}
	return strings.Join(words, " ")
}

// usageEvent is one event of POST /api/v1/tools/usage/batch.
type usageEvent struct {
	ToolID    string    `json:"toolId"`
	SessionID string    `json:"sessionId"`
	UserID    string    `json:"userId"`
	Query     string    `json:"query"`
	Success   bool      `json:"success"`
	LatencyMs int64     `json:"latencyMs"`
	At        time.Time `json:"at"`
}

// usageEvents returns n seeded usage events over the catalogue, as a busy
// deployment gathers them: tools drawn with a Zipf skew (a few tools serve
// most queries), each query a paraphrase of a few words of the tool's
// description, sessions of one to four uses by 500 users, 95 % successful,
// spread over the 30 days before now.
func usageEvents(catalogue []tool.Manifest, n int, now time.Time) []usageEvent {
	if len(catalogue) == 0 || n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(variantSeed, 29))
	// The popularity order is a seeded shuffle, not the catalogue's.
	order := rng.Perm(len(catalogue))
	zipf := rand.NewZipf(rng, 1.1, 10, uint64(len(catalogue)-1))
	out := make([]usageEvent, 0, n)
	session, left, user := 0, 0, 0
	start := now.Add(-30 * 24 * time.Hour)
	for i := 0; i < n; i++ {
		if left == 0 {
			session++
			left = 1 + rng.IntN(4)
			user = rng.IntN(500)
		}
		left--
		m := catalogue[order[zipf.Uint64()]]
		out = append(out, usageEvent{
			ToolID: m.ToolID, SessionID: fmt.Sprintf("bench-s%d", session), UserID: fmt.Sprintf("bench-u%d", user),
			Query: usageQuery(m.Description, rng), Success: rng.IntN(20) != 0, LatencyMs: int64(20 + rng.IntN(400)),
			At: start.Add(time.Duration(i) * (30 * 24 * time.Hour) / time.Duration(n)),
		})
	}
	return out
}

// usageQuery is what a user might have asked for a tool: a paraphrase of
// three to eight consecutive words of its description, mostly from its
// start, where the operation is named.
func usageQuery(desc string, rng *rand.Rand) string {
	words := strings.Fields(rewrite(desc, rng))
	if len(words) == 0 {
		return ""
	}
	k := min(len(words), 3+rng.IntN(6))
	at := rng.IntN(min(3, len(words)-k+1))
	return strings.Trim(strings.Join(words[at:at+k], " "), ".,;: ")
}
