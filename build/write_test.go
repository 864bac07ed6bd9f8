package build

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// replyModel answers every prompt with reply, reporting tokens.
type replyModel struct {
	reply  string
	tokens int
	prompt string
}

func (m *replyModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.prompt = msgs[0].Parts[0].(llms.TextContent).Text
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: m.reply, GenerationInfo: map[string]any{"TotalTokens": m.tokens}}}}, nil
}

func (m *replyModel) Call(ctx context.Context, prompt string, _ ...llms.CallOption) (string, error) {
	return "", errors.New("unused")
}

func TestWriteParsesTheProgramAndCountsTokens(t *testing.T) {
	b, _ := json.Marshal(program(celsius))
	m := &replyModel{reply: "```json\n" + string(b) + "\n```", tokens: 700}
	d, err := Write(context.Background(), m, Request{Verb: "FAHRENHEIT_TO_CELSIUS"}, &Attempt{Source: "package main", Problem: "tool.go:3: undefined: x"}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if d.Tokens != 700 || d.Program.Tool != "fahrenheit_to_celsius" || len(d.Program.Tests) != 2 {
		t.Fatalf("draft: %+v", d)
	}
	if !strings.Contains(m.prompt, "VERB TO BUILD: FAHRENHEIT_TO_CELSIUS") || !strings.Contains(m.prompt, "undefined: x") {
		t.Fatalf("prompt lacks the verb or the last round's problem:\n%s", m.prompt)
	}
	if _, err := Write(context.Background(), m, Request{Verb: "X"}, nil, 500); !errors.Is(err, ErrBudget) {
		t.Fatalf("over budget: %v", err)
	}
	m.reply = "I cannot do that."
	if _, err := Write(context.Background(), m, Request{Verb: "X"}, nil, 0); !errors.Is(err, ErrInvalidAnswer) {
		t.Fatalf("prose: %v", err)
	}
	if _, err := Write(context.Background(), nil, Request{Verb: "X"}, nil, 0); !errors.Is(err, ErrNoModel) {
		t.Fatalf("no model: %v", err)
	}
}

func TestHighlightKeepsTheSourceAndEscapesIt(t *testing.T) {
	src := celsius + "\n// </pre><script>alert(1)</script>\nvar s = \"<b>\" // trailing\n"
	out := string(Highlight(src))
	if strings.Contains(out, "<script>") || strings.Contains(out, "<b>") {
		t.Fatalf("unescaped markup in %s", out)
	}
	for _, want := range []string{`<span class="go-kw">func</span>`, `<span class="go-str">&#34;math&#34;</span>`, `<span class="go-num">32</span>`, `<span class="go-id">nil</span>`, `<span class="go-com">// trailing</span>`} {
		if !strings.Contains(out, want) {
			t.Errorf("highlight lacks %s", want)
		}
	}
	plain := html.UnescapeString(regexp.MustCompile(`</?span[^>]*>`).ReplaceAllString(out, ""))
	if plain != src {
		t.Fatalf("the source changed:\n%s", plain)
	}
}
