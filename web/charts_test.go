package web

import (
	"strings"
	"testing"
	"time"
)

// A chart is an SVG image with a title and a description, finite
// coordinates whatever its data (all zero, one point), and a table of
// the buckets that hold something.
func TestChartsAreLabelledAndFinite(t *testing.T) {
	t0 := time.Date(2026, 7, 1, 6, 0, 0, 0, time.UTC)
	xs := buckets(t0, t0.Add(3*time.Minute), time.Minute)
	if len(xs) != 4 {
		t.Fatalf("buckets: %v", xs)
	}
	for name, c := range map[string]chart{
		"line":      lineChart("l", "Searches", "per minute", "15:04", "", xs, []line{{Name: "searches", Class: "s0", Values: []float64{0, 3, 0, 1}}}),
		"all zero":  lineChart("z", "Zero", "nothing", "15:04", "", xs, []line{{Name: "x", Class: "s0", Values: make([]float64, 4)}}),
		"one point": lineChart("o", "One", "one", "15:04", "", xs[:1], []line{{Name: "x", Class: "s0", Values: []float64{2}}}),
		"stack":     stackChart("s", "Fulfilments", "stacked", "15:04", xs, []line{{Name: "a", Class: "s0", Values: []float64{1, 0, 2, 0}}, {Name: "b", Class: "s1", Values: []float64{0, 0, 1, 0}}}),
		"bars":      barChart("b", "Top tools", "executions", []barItem{{Label: "pets.list", Value: 4, Rate: 0.75}}),
	} {
		svg := string(c.SVG)
		if !strings.Contains(svg, `role="img"`) || !strings.Contains(svg, `<title id="`+c.ID+`-title">`) || !strings.Contains(svg, `<desc id="`+c.ID+`-desc">`) {
			t.Errorf("%s: not a labelled image:\n%s", name, svg)
		}
		if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
			t.Errorf("%s: non-finite coordinates:\n%s", name, svg)
		}
	}
	c := stackChart("s", "F", "d", "15:04", xs, []line{{Name: "a", Class: "s0", Values: []float64{1, 0, 2, 0}}})
	if len(c.Rows) != 2 || c.Rows[1][1] != "2" {
		t.Fatalf("stack table rows: %v", c.Rows)
	}
	if b := barChart("b", "T", "d", []barItem{{Label: "pets.list", Value: 4, Rate: 0.75}}); b.Rows[0][2] != "75.0%" {
		t.Fatalf("bar table: %v", b.Rows)
	}
}

// With no data the dashboard says, for each chart, what will fill it; a
// caller the API refuses gets a page that says the dashboard is for admins.
func TestDashboardEmptyAndRefused(t *testing.T) {
	b, e := newBrowser(t)
	b.signIn(e.admin)
	w := b.do("GET", "/ui/dashboard", nil)
	// Six charts and the ranking model's versions, each saying what fills it.
	if w.Code != 200 || strings.Count(w.Body.String(), `class="empty"`) != 7 || strings.Contains(w.Body.String(), "<svg class=\"chart-svg\"") ||
		!strings.Contains(w.Body.String(), "No version has been trained yet") {
		t.Fatalf("empty dashboard: %d\n%s", w.Code, w.Body)
	}
	signedOut := e.browser(b.c)
	if w := signedOut.do("GET", "/ui/dashboard", nil); w.Code != 303 || w.Header().Get("Location") != "/ui/signin" {
		t.Fatalf("a guest's dashboard: %d", w.Code)
	}
	user := e.browser(b.c)
	user.signIn(e.user)
	if w := user.do("GET", "/ui/dashboard", nil); w.Code != 403 || !strings.Contains(w.Body.String(), "The dashboard is for admins") {
		t.Fatalf("a user's dashboard: %d\n%s", w.Code, w.Body)
	}
}
