package use

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type referenceFile struct {
	TFJS  string `json:"tfjs"`
	Model string `json:"model"`
	Cases []struct {
		Text      string    `json:"text"`
		Tokens    []int     `json:"tokens"`
		Embedding []float64 `json:"embedding"`
	} `json:"cases"`
}

func loadReference(t testing.TB) referenceFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref referenceFile
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) == 0 {
		t.Fatal("reference.json has no cases")
	}
	return ref
}

// modelDir finds the weights: $TOOLSMITH_MODEL_DIR, else
// <module root>/.cache/models/use-lite-0.2.0. It skips (or, with
// TOOLSMITH_REQUIRE_MODEL=1, fails) when they are absent.
func modelDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, ".cache", "models", DefaultDirName)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.json")); err != nil {
		msg := fmt.Sprintf("USE weights not found in %s; fetch them with: TOOLSMITH_FETCH_MODEL=1 go test ./embed/use -run TestFetchDefault (or set TOOLSMITH_MODEL_DIR to an unpacked copy)", dir)
		if os.Getenv("TOOLSMITH_REQUIRE_MODEL") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the test directory")
		}
		dir = parent
	}
}

var (
	sharedOnce  sync.Once
	sharedModel *Model
	sharedErr   error
)

func loadModel(t testing.TB) *Model {
	t.Helper()
	dir := modelDir(t)
	sharedOnce.Do(func() { sharedModel, sharedErr = Load(dir) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedModel
}

func TestReferenceEmbeddings(t *testing.T) {
	m := loadModel(t)
	ref := loadReference(t)
	for _, c := range ref.Cases {
		t.Run(fmt.Sprintf("%.24q", c.Text), func(t *testing.T) {
			if got := m.Tokenizer().Encode(c.Text); fmt.Sprint(got) != fmt.Sprint(c.Tokens) {
				t.Fatalf("tokens:\n got %v\nwant %v", got, c.Tokens)
			}
			got, err := m.EmbedQuery(context.Background(), c.Text)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != Dimension || len(c.Embedding) != Dimension {
				t.Fatalf("dimension %d, reference %d", len(got), len(c.Embedding))
			}
			var dot, na, nb, worst float64
			for k, v := range got {
				w := c.Embedding[k]
				worst = math.Max(worst, math.Abs(float64(v)-w))
				dot += float64(v) * w
				na += float64(v) * float64(v)
				nb += w * w
			}
			cos := dot / math.Sqrt(na*nb)
			if worst > 1e-5 || cos < 0.99999 {
				t.Fatalf("max abs diff %.3g, cosine %.9f", worst, cos)
			}
			if math.Abs(math.Sqrt(na)-1) > 1e-5 {
				t.Errorf("norm %v, want 1", math.Sqrt(na))
			}
			t.Logf("max abs diff %.3g, cosine %.9f", worst, cos)
		})
	}
}

func TestEmbedDocumentsMatchesQuery(t *testing.T) {
	m := loadModel(t)
	ref := loadReference(t)
	var texts []string
	for _, c := range ref.Cases {
		texts = append(texts, c.Text)
	}
	docs, err := m.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(docs), len(texts))
	}
	for k, text := range texts {
		q, err := m.EmbedQuery(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		for j := range q {
			if q[j] != docs[k][j] {
				t.Fatalf("document %d differs from its query embedding at %d", k, j)
			}
		}
	}
}

func TestSemanticSimilarity(t *testing.T) {
	m := loadModel(t)
	ctx := context.Background()
	vs, err := m.EmbedDocuments(ctx, []string{
		"send an email to a customer",
		"email the client a message",
		"resize a PNG image",
	})
	if err != nil {
		t.Fatal(err)
	}
	near, far := dot(vs[0], vs[1]), dot(vs[0], vs[2])
	if near <= far {
		t.Fatalf("paraphrase similarity %.3f not above unrelated %.3f", near, far)
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for k := range a {
		s += float64(a[k]) * float64(b[k])
	}
	return s
}

func TestEmbedErrors(t *testing.T) {
	m := loadModel(t)
	if _, err := m.EmbedQuery(context.Background(), ""); !errors.Is(err, ErrEmptyText) {
		t.Fatalf("empty text: got %v, want ErrEmptyText", err)
	}
	if _, err := m.EmbedDocuments(context.Background(), []string{"ok", ""}); !errors.Is(err, ErrEmptyText) {
		t.Fatalf("documents with empty text: got %v, want ErrEmptyText", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.EmbedQuery(ctx, "hello"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query: got %v", err)
	}
	if _, err := m.EmbedDocuments(ctx, []string{"a", "b", "c"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled documents: got %v", err)
	}
	if got, err := m.EmbedDocuments(context.Background(), nil); err != nil || len(got) != 0 {
		t.Fatalf("no documents: %v, %v", got, err)
	}
}

func TestConcurrentQueries(t *testing.T) {
	m := loadModel(t)
	want, err := m.EmbedQuery(context.Background(), "list open pull requests")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := m.EmbedQuery(context.Background(), "list open pull requests")
			if err != nil {
				errs <- err
				return
			}
			for j := range got {
				if got[j] != want[j] {
					errs <- fmt.Errorf("concurrent result differs at %d", j)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkEmbedQuery(b *testing.B) {
	m := loadModel(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.EmbedQuery(ctx, "convert a currency amount from USD to EUR"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

// benchDocs are tool-description-sized texts (10-30 words), the documents
// Toolsmith embeds at registration.
var benchDocs = []string{
	"Send an email message to one or more recipients with a subject, body and optional attachments.",
	"Convert an amount of money from one currency to another using the latest daily exchange rates.",
	"Resize a PNG or JPEG image to the given width and height, keeping the aspect ratio if asked.",
	"List the open pull requests of a GitHub repository, newest first, with their authors and labels.",
	"Get the weather forecast for a city for the next seven days: temperature, rain and wind.",
	"Translate a text from one language to another; the source language is detected when omitted.",
	"Create a calendar event with a title, start and end time, location and a list of attendees.",
	"Summarise a long document into a few sentences that keep its key facts and figures.",
}

func BenchmarkEmbedDocuments32(b *testing.B) {
	m := loadModel(b)
	docs := make([]string, 32)
	for k := range docs {
		docs[k] = fmt.Sprintf("%s (tool %d)", benchDocs[k%len(benchDocs)], k)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.EmbedDocuments(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

// BenchmarkEmbedPhrases embeds what the phrase signal of retrieval adds to
// a never-seen 24-word query: its 22 three-word windows, one word
// apart, in one EmbedDocuments call.
func BenchmarkEmbedPhrases(b *testing.B) {
	m := loadModel(b)
	words := strings.Fields("I am looking for a reliable way to convert the prices in my online shop from US dollars to euros every morning before opening")
	var phrases []string
	for i := 0; i < len(words); i++ {
		end := min(i+3, len(words))
		phrases = append(phrases, strings.Join(words[i:end], " "))
		if end == len(words) {
			break
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.EmbedDocuments(ctx, phrases); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(phrases)), "phrases")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

// TestPlanBatches: every text is in exactly one pass; a pass holds texts of
// neighbouring lengths, at most maxBatchTokens padded tokens (a longer text
// runs alone) and at most an even share of the texts per worker.
func TestPlanBatches(t *testing.T) {
	lengths := []int{3, 300, 5, 4, 40, 41, 3, 90, 7, 64, 64, 2, 120, 6}
	ids := make([][]int, len(lengths))
	for i, n := range lengths {
		ids[i] = make([]int, n)
	}
	for _, workers := range []int{1, 2, 4, 16} {
		batches := planBatches(ids, workers)
		share := (len(ids) + workers - 1) / workers
		seen := make([]int, len(ids))
		prevMax := 0
		for _, b := range batches {
			longest := 0
			for j, k := range b {
				seen[k]++
				longest = max(longest, lengths[k])
				if j > 0 && lengths[k] < lengths[b[j-1]] {
					t.Fatalf("workers %d: pass %v is not ordered by length", workers, b)
				}
				if lengths[k] < prevMax {
					t.Fatalf("workers %d: pass %v starts shorter than the last pass ended", workers, b)
				}
			}
			prevMax = longest
			if len(b) > share || (len(b) > 1 && len(b)*longest > maxBatchTokens) {
				t.Fatalf("workers %d: pass %v (lengths up to %d) is too big", workers, b, longest)
			}
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("workers %d: text %d is in %d passes", workers, k, n)
			}
		}
	}
	if got := planBatches(nil, 2); len(got) != 0 {
		t.Fatalf("no texts: %v", got)
	}
}
