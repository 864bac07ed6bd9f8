package benchplot

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The plot reads the bench's last JSON line and draws a well-formed SVG
// with a point per run and panel, the targets and the figures.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, err := Read(write("a.out", "table\n{\"tools\":10000,\"registerPerSecond\":150,\"search\":{\"hybrid/unseen/1\":{\"p95Ms\":31}},\"rssSteadyMB\":{\"searched\":470},\"restartToReadySeconds\":3}\n"))
	if err != nil || a.Tools != 10000 || a.Search["hybrid/unseen/1"].P95 != 31 {
		t.Fatalf("read: %+v %v", a, err)
	}
	b := Run{Tools: 100000, RegisterPerSec: 104, RestartSeconds: 12, SteadyMB: map[string]float64{"searched": 1100}}
	c := Run{Tools: 10000, UsageEvents: 100000, RegisterPerSec: 140}
	if _, err := Read(write("b.out", "no json here\n")); err == nil {
		t.Error("a file without a JSON line reads")
	}
	var out strings.Builder
	if err := Write(&out, []Run{b, a, c}); err != nil {
		t.Fatal(err)
	}
	svg := out.String()
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if n := strings.Count(svg, "<circle"); n != 3*len(panels) {
		t.Errorf("%d points, want %d", n, 3*len(panels))
	}
	for _, want := range []string{">100k<", ">10k<", "target ≥ 100", "target ≤ 50", ">1100<", "100,000 usage events", "<polyline"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q in the SVG", want)
		}
	}
	if err := Write(&out, nil); err == nil {
		t.Error("no runs draws")
	}
}
