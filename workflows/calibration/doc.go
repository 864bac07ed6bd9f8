// Package calibration holds the checks behind the default substitution
// rule on the demo catalogue: with the built-in USE-lite embedder, verbs a
// planner would write reach the right tool above workflows.DefaultThreshold,
// and the whole rule (retrieval.DefaultSubstituteRule: the decision model's
// confidence and the inputs' fit) substitutes what it should and nothing
// else. It has no code of its own, only tests, which need the weights
// (TOOLSMITH_MODEL_DIR; `make test` sets it).
//
// The measurements behind the rule are `toolsmith eval` protocols:
// --protocol threshold for the first, similarity-only threshold, and
// --protocol leave-one-out for the decision model.
//
// See CALIBRATION.md for the figures and the choice.
package calibration
