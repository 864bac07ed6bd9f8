package tool

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randomToolID draws an id the manifest rules allow (toolIDRe, at most
// MaxToolIDLen characters), biased towards the characters that make the
// mapping hard: '_', '-', '.', runs of them, and long ids.
func randomToolID(r *rand.Rand) string {
	const first = "abcxyzABCXYZ"
	const rest = "abz09AZ_-__"
	n := 1 + r.IntN(MaxToolIDLen)
	if r.IntN(2) == 0 {
		n = 1 + r.IntN(24)
	}
	var b strings.Builder
	b.WriteByte(first[r.IntN(len(first))])
	for b.Len() < n {
		// A dot must be followed by at least one segment character.
		if b.Len() < n-1 && r.IntN(5) == 0 {
			b.WriteByte('.')
		}
		b.WriteByte(rest[r.IntN(len(rest))])
	}
	return b.String()
}

func TestFunctionNameProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 64))
	names := map[string]string{}
	ids := []string{"a", "currency.convert", "a.b", "a__b", "a_.b", "a._b", "a-.-b", "a.b.c.d",
		strings.Repeat("a", MaxToolIDLen), strings.Repeat("a.", 63) + "a", "x" + strings.Repeat("_", 127)}
	for range 50000 {
		ids = append(ids, randomToolID(r))
	}
	plain := 0
	for _, id := range ids {
		if !toolIDRe.MatchString(id) || len(id) > MaxToolIDLen {
			t.Fatalf("generator made an invalid id %q", id)
		}
		name := FunctionName(id)
		if !FunctionNameRe.MatchString(name) {
			t.Fatalf("FunctionName(%q) = %q is not a valid OpenAI function name", id, name)
		}
		if other, ok := names[name]; ok && other != id {
			t.Fatalf("%q and %q both map to %q", id, other, name)
		}
		names[name] = id
		if !MatchesFunctionName(id, name) {
			t.Fatalf("MatchesFunctionName(%q, %q) = false", id, name)
		}
		back, ok := ToolIDFromFunctionName(name)
		if ok {
			plain++
			if back != id {
				t.Fatalf("ToolIDFromFunctionName(%q) = %q, want %q", name, back, id)
			}
		} else if !strings.Contains(name, hashedSep) {
			t.Fatalf("%q (from %q) is neither plain nor hashed", name, id)
		}
	}
	if plain == 0 || plain == len(ids) {
		t.Fatalf("the sample should hold plain and hashed names, got %d plain of %d", plain, len(ids))
	}
}

func TestFunctionNameExamples(t *testing.T) {
	tests := map[string]string{
		"currency.convert":     "currency__convert",
		"airline.book_seat":    "airline__book_seat",
		"petstore-v2.listPets": "petstore-v2__listPets",
	}
	for id, want := range tests {
		if got := FunctionName(id); got != want {
			t.Errorf("FunctionName(%q) = %q, want %q", id, got, want)
		}
	}
	for _, bad := range []string{"", "a.b", "a___0123456789ab", "a__", "__a"} {
		if id, ok := ToolIDFromFunctionName(bad); ok {
			t.Errorf("ToolIDFromFunctionName(%q) = %q, want no plain id", bad, id)
		}
	}
}
