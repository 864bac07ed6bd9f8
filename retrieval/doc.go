// Package retrieval finds the few right tools for an intent and assembles
// what an LLM planner sees about them.
//
// A Service ranks tools with five strategies (hybrid, semantic, keyword,
// category, session). Hybrid ranking gathers candidates from the store's
// vector index, full-text index, usage centroids ("usage embeddings"), past
// served queries, the session's history and the entity graph,
// then scores each candidate as a weighted sum of per-signal scores put on
// comparable scales within the candidate set, so that a weight means the
// same thing whatever the raw scale of its signal (cosines cluster in a
// narrow band, bm25 is unbounded). Every hit carries its score breakdown.
//
// Signals and their scales (default Options.Normalisation "z"): semantic
// (cosine, centred on the catalogue's mean tool vector, graph.MeanVectorer,
// z-scored over the candidates), phrase (the same
// centred cosine for the query's best window of Options.PhraseWords words,
// z-scored; only queries of more than PhraseWords+2 words have it), keyword (bm25,
// z-scored), subword (character 3–5-gram TF-IDF cosine, z-scored), usage
// (cosine to the tool's centroid of served queries, min-max, times the
// confidence n/(n+3) of its n queries), neighbours (a kNN vote over the
// embeddings of recent successful queries: the mean cosine of the query's k
// nearest past queries that the tool served, absolute), query log (bm25 of
// the query against the words of the queries each tool served, as it is:
// document expansion from usage; see queryLog), verb (1 when the query names
// the tool's verb), history (session recency 1/rank, halved for failures),
// success (Bayesian success rate with a prior, so an unused tool scores the
// prior, not zero), graph (entity boost 1/depth, or −½ for a tool tied only
// to other entities) and complexity (0, ½, 1, subtracted). The other modes,
// "minmax" and "rank", are kept for comparison in toolsmith eval.
// evaluation/TUNING.md logs how the weights were chosen.
//
// Every read path filters through the caller's visibility (access.Caller):
// a caller never sees a tool it cannot execute, in results, manifests,
// related tools or the lightweight index.
//
// Learning from use: RecordEvents turns successful selections (query text →
// tool) into graph.UsageEvents with the query's embedding, so the store keeps
// a running centroid per tool; success rates, session history, learned
// pairings and the query log come from the same events. RecordUsage is the
// same path for the tools Toolsmith runs itself (the execute activity),
// recorded as graph.OriginObserved. A report (Report, RecordEvents) of a
// caller below admin is learned only when one of the user's own observed
// runs of that tool within ReportWindow backs it, one report per run
// (graph.RunClaims); an unbacked report is not stored, so nothing is
// learned just by saying so. The neighbours' exemplars and the query log
// live in process memory and are rebuilt from the store's served queries and
// their embeddings (graph.Store.ServedQueries) on first use after a start.
// From then on they follow the store (graph.Store.ServedQueriesAfter, at
// most every Options.FollowEvery), so the executions a worker records and
// another replica's events count without a restart, each once: even this
// process's own events reach the memory through the store.
//
// Results are cached in-process by strategy, query hash, caller hash and
// session; Invalidate (wired to registry.WithOnChange) and the admin scopes
// (all, user, tool, strategy) clear it.
package retrieval
