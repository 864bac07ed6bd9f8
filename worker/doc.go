// Package worker builds the Temporal worker that runs Toolsmith's workflows
// and activities. It is the only place the activity structs are built and
// registered (by pointer, so their method names become activity types).
package worker
