package evaluation

import "hash/fnv"

// isCold reports whether a tool is among the cold tools of --cold-tools
// share: those whose id hashes below share (a label-blind choice).
func isCold(id string, share float64) bool {
	if share <= 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte("cold:" + id))
	return float64(h.Sum64()%10000)/10000 < share
}

// ColdTools is the cold-tool-with-look-alikes case of --cold-tools: every
// tool has history but a hash-chosen share of cold ones, which have none,
// and only queries for cold tools are scored. It returns the history
// without the cold tools (a history query keeps its other tools; one with
// only cold tools is dropped) and the queries all of whose relevant tools
// are cold. This is a young tool in an established deployment: its
// look-alikes have served queries like its own, so their evidence may
// lift them over it.
func ColdTools(history, queries []QueryRecord, share float64) (hist, qs []QueryRecord) {
	for _, h := range history {
		var keep []string
		for _, id := range h.RelevantToolIDs {
			if !isCold(id, share) {
				keep = append(keep, id)
			}
		}
		if len(keep) > 0 {
			hist = append(hist, QueryRecord{Query: h.Query, RelevantToolIDs: keep, Subset: h.Subset})
		}
	}
	for _, q := range queries {
		cold := len(q.RelevantToolIDs) > 0
		for _, id := range q.RelevantToolIDs {
			cold = cold && isCold(id, share)
		}
		if cold {
			qs = append(qs, q)
		}
	}
	return hist, qs
}
