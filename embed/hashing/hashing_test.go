package hashing

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"sync"
	"testing"
)

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for k := range a {
		dot += float64(a[k]) * float64(b[k])
		na += float64(a[k]) * float64(a[k])
		nb += float64(b[k]) * float64(b[k])
	}
	return dot / math.Sqrt(na*nb)
}

func TestDeterministicAndNormalised(t *testing.T) {
	e := New(0)
	if e.Dimension() != DefaultDimension || e.Name() != "hashing-v1" {
		t.Fatalf("got %s/%d", e.Name(), e.Dimension())
	}
	text := "Send an e-mail to the customer!"
	a, err := e.EmbedQuery(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	b := New(256).Vector(text)
	var norm float64
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("dimension %d differs between runs", k)
		}
		norm += float64(a[k]) * float64(a[k])
	}
	if math.Abs(norm-1) > 1e-6 {
		t.Fatalf("squared norm %v, want 1", norm)
	}
	// Case and punctuation do not matter.
	c := e.Vector("send AN e mail, to the Customer")
	if cos := cosine(a, c); cos < 0.9999 {
		t.Fatalf("case/punctuation changed the vector: cosine %v", cos)
	}
}

func TestDimension(t *testing.T) {
	for _, dim := range []int{1, 7, 64, 384, 1024} {
		v := New(dim).Vector("resize an image")
		if len(v) != dim {
			t.Errorf("New(%d): got %d values", dim, len(v))
		}
	}
	if got := New(-3).Dimension(); got != DefaultDimension {
		t.Errorf("New(-3).Dimension() = %d", got)
	}
}

func TestSimilarCloserThanUnrelated(t *testing.T) {
	e := New(256)
	tests := []struct{ query, near, far string }{
		{"send email to customer", "send an email to a customer", "resize png image"},
		{"convert currency USD to EUR", "currency conversion from usd to eur", "list github pull requests"},
		{"resize image", "resizing images", "delete database table"},
		{"get weather forecast for city", "weather forecast by city", "translate text to french"},
	}
	for _, tc := range tests {
		q := e.Vector(tc.query)
		near, far := cosine(q, e.Vector(tc.near)), cosine(q, e.Vector(tc.far))
		if near <= far {
			t.Errorf("%q: near %q %.3f <= far %q %.3f", tc.query, tc.near, near, tc.far, far)
		}
	}
}

func TestEmptyAndPunctuationOnly(t *testing.T) {
	e := New(32)
	for _, text := range []string{"", "  ", "?!-,."} {
		v := e.Vector(text)
		for _, x := range v {
			if x != 0 {
				t.Fatalf("%q: want the zero vector, got %v", text, v)
			}
		}
	}
}

func TestWords(t *testing.T) {
	got := Words("Hello, World! snake_case v2.1 Straße")
	want := []string{"hello", "world", "snake", "case", "v2", "1", "straße"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestEmbedDocumentsAndCancel(t *testing.T) {
	e := New(64)
	docs, err := e.EmbedDocuments(context.Background(), []string{"a b", "c d"})
	if err != nil || len(docs) != 2 {
		t.Fatalf("got %d docs, %v", len(docs), err)
	}
	if cosine(docs[0], e.Vector("a b")) < 0.999999 {
		t.Fatal("document vector differs from query vector")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.EmbedQuery(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("query: %v", err)
	}
	if _, err := e.EmbedDocuments(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("documents: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	e := New(128)
	want := e.Vector("register a new tool manifest")
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				got, err := e.EmbedQuery(context.Background(), "register a new tool manifest")
				if err != nil {
					t.Error(err)
					return
				}
				for k := range got {
					if got[k] != want[k] {
						t.Errorf("concurrent result differs at %d", k)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkVector(b *testing.B) {
	e := New(256)
	b.ReportAllocs()
	for b.Loop() {
		e.Vector("Convert an amount of money from one currency to another using daily rates")
	}
}

func TestFNV1aMatchesStdlib(t *testing.T) {
	for _, s := range []string{"", "a", "wsend", "b\x00send\x00email", "c#ém"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := fnv1a(s), h.Sum64(); got != want {
			t.Errorf("fnv1a(%q) = %x, want %x", s, got, want)
		}
	}
}
