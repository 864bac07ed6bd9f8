// Package benchplot draws how `toolsmith bench` figures grow with the
// catalogue: an SVG of small panels (registration rate, never-seen hybrid
// p95, steady memory, restart to ready), one point per bench run, from the
// JSON objects `toolsmith bench --json` prints last. PERFORMANCE.md's plot
// is made with `go run ./internal/benchplot/cmd OUT.svg RUN.json…`.
package benchplot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// Run is what the plot reads of one bench report.
type Run struct {
	Tools          int     `json:"tools"`
	UsageEvents    int     `json:"usageEvents"`
	RegisterPerSec float64 `json:"registerPerSecond"`
	Search         map[string]struct {
		P95 float64 `json:"p95Ms"`
	} `json:"search"`
	SteadyMB       map[string]float64 `json:"rssSteadyMB"`
	RestartSeconds float64            `json:"restartToReadySeconds"`
}

// Read returns the run of a bench output file: its last line that parses
// as a JSON object with a tool count.
func Read(path string) (Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return Run{}, err
	}
	defer f.Close()
	var last Run
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var r Run
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &r) == nil && r.Tools > 0 {
			last, found = r, true
		}
	}
	if err := sc.Err(); err != nil {
		return Run{}, err
	}
	if !found {
		return Run{}, fmt.Errorf("%s: no bench JSON line", path)
	}
	return last, nil
}

// panel is one figure against the tool count.
type panel struct {
	title, unit string
	value       func(Run) float64
	target      float64 // 0 for none
	above       bool    // the target is a floor, not a ceiling
}

var panels = []panel{
	{"registration", "tools/s", func(r Run) float64 { return r.RegisterPerSec }, 100, true},
	{"never-seen hybrid p95, 1 client", "ms", func(r Run) float64 { return r.Search["hybrid/unseen/1"].P95 }, 50, false},
	{"steady memory after the searches", "MB", func(r Run) float64 { return r.SteadyMB["searched"] }, 1200, false},
	{"restart to ready", "s", func(r Run) float64 { return r.RestartSeconds }, 15, false},
}

// Write draws runs (without usage events; those with are marked apart) as
// an SVG.
func Write(w io.Writer, runs []Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("benchplot: no runs")
	}
	runs = slices.Clone(runs)
	slices.SortFunc(runs, func(a, b Run) int { return a.Tools - b.Tools })
	const pw, ph, pad = 280, 220, 70
	width := len(panels)*(pw+pad) + pad
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, ph+2*pad)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	minT, maxT := float64(runs[0].Tools), float64(runs[len(runs)-1].Tools)
	if maxT <= minT {
		maxT = minT * 10
	}
	lx := func(t float64) float64 {
		return (math.Log10(t) - math.Log10(minT)) / (math.Log10(maxT) - math.Log10(minT))
	}
	for i, p := range panels {
		x0, y0 := float64(i*(pw+pad)+pad), float64(pad)
		top := p.target
		for _, r := range runs {
			top = max(top, p.value(r))
		}
		top *= 1.15
		px := func(t float64) float64 { return x0 + lx(t)*pw }
		py := func(v float64) float64 { return y0 + ph - v/top*ph }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">%s (%s)</text>`+"\n", x0, y0-12, p.title, p.unit)
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", x0, y0, pw, ph)
		ticks := map[int]bool{}
		for _, r := range runs {
			if !ticks[r.Tools] {
				ticks[r.Tools] = true
				fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%dk</text>`+"\n", px(float64(r.Tools)), y0+ph+16, r.Tools/1000)
			}
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">tools (log scale)</text>`+"\n", x0+pw/2, y0+ph+32)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">0</text><text x="%.0f" y="%.0f" text-anchor="end">%.0f</text>`+"\n", x0-4, y0+ph, x0-4, y0+10, top)
		if p.target > 0 {
			fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#c33" stroke-dasharray="4 3"/><text x="%.0f" y="%.1f" fill="#c33" text-anchor="end">target %s %.0f</text>`+"\n",
				x0, x0+pw, py(p.target), py(p.target), x0+pw-4, py(p.target)-4, map[bool]string{true: "≥", false: "≤"}[p.above], p.target)
		}
		var pts []string
		for _, r := range runs {
			if r.UsageEvents > 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(float64(r.Tools)), py(p.value(r))))
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#236" stroke-width="2"/>`+"\n", strings.Join(pts, " "))
		}
		for _, r := range runs {
			color, label := "#236", ""
			if r.UsageEvents > 0 {
				color, label = "#e80", fmt.Sprintf(" (%s usage events)", thousands(r.UsageEvents))
			}
			x, y := px(float64(r.Tools)), py(p.value(r))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s tools%s: %.1f %s</title></circle>`+"\n", x, y, color, thousands(r.Tools), label, p.value(r), p.unit)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s">%.0f</text>`+"\n", x+6, y-6, color, p.value(r))
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d">blue: the catalogue alone; orange: with usage events. Each run's embedder and load: PERFORMANCE.md.</text>`+"\n", pad, ph+2*pad-6)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
