// Package review is the airlock's review lifecycle as a domain service:
// tool sources and their scans, the reviews those scans open (running
// AirlockWorkflows), their details and timelines, the decisions on them
// (approve with a policy, reject with a reason) and the reviews that
// ended. It is the one place that starts, lists, queries and updates
// those workflows; the REST routes (api/airlock), the console (web) and
// any other edge call it and translate its types, never Temporal's.
//
// Its types (Pending, State, Outcome, Decided, TimelineEntry,
// ScanOutcome) are its own: the workflows' payloads stay the workflows',
// and a change to them is mapped here rather than leaking to callers.
package review
