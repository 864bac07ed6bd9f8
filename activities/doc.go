// Package activities holds every side effect of Toolsmith's workflows:
// searching the graph, executing tools through modules, asking the LLM for a
// plan, discovering modules and recording capability gaps. Activities are
// grouped in structs by dependency (Graph, Modules, LLM), built once in the
// worker and registered by pointer; their method names are the activity type
// names and are unique across structs.
//
// errors.go is the one place errors become Temporal application errors:
// every failure a workflow must branch on carries one of the ErrType*
// constants, and workflows read appErr.Type(), never the message.
//
// Every side effect that leaves the process carries an idempotency key made
// of the workflow ID and the activity ID. Both are stable across retries and
// worker restarts, so a module that honours the Idempotency-Key header runs
// each step once however often Temporal retries it.
package activities
