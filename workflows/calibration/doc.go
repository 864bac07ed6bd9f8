// Package calibration holds the measurement behind
// workflows.DefaultThreshold: how similar (cosine, built-in USE-lite
// embedder) the best tool is to a request when it is the right tool, and when
// it is not. It has no code of its own, only tests: one reruns the
// measurement when the embedder weights and the MetaTool evaluation set are
// available,
//
//	TOOLSMITH_MODEL_DIR=<unpacked USE-lite weights> \
//	TOOLSMITH_EVAL_DIR=<dir with tools.jsonl and queries.jsonl> \
//	go test ./workflows/calibration -run TestCalibrate -v
//
// and the others check the whole default substitution rule
// (retrieval.DefaultSubstituteRule: the decision model's confidence and the
// inputs' fit) on the demo catalogue.
//
// See CALIBRATION.md for the figures and the choice.
package calibration
