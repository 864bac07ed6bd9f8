// Package embed turns text into vectors. Embedder has the method set of
// langchaingo's embeddings.Embedder, so any langchaingo provider (Ollama,
// OpenAI-compatible) satisfies it; Model adds the name and dimension the graph
// store records so that vectors from different models are never mixed.
package embed

import "context"

// Embedder is langchaingo's embeddings.Embedder method set.
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Model is an Embedder that knows its name and output dimension.
type Model interface {
	Embedder
	// Name identifies the model and its weights, e.g. "use-lite@0.2.0".
	Name() string
	// Dimension is the length of every vector the model returns.
	Dimension() int
}
