// Package hashing is a deterministic, dependency-free feature-hashing
// embedder: no weights, no network, microseconds per text. It backs tests
// across Toolsmith and the `--embedder hashing` no-download mode. It captures
// word and sub-word overlap, not meaning: "email" and "mail" are close,
// "email" and "message" are not.
package hashing
