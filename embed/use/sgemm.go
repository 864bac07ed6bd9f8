package use

import (
	"runtime"
	"sync"
)

// The dense layers (1x1 convolutions and MatMuls against a graph constant)
// hold nearly all of the model's arithmetic. A row-at-a-time kernel reads
// the whole weight matrix once per token, so it is bound by memory, not by
// arithmetic. Here the weights are packed once into 16-column panels and
// sgemm4x16 multiplies four tokens at a time against a panel that stays in
// cache, reading each weight once per four tokens (sgemm6x16: six).

const panelWidth = 16

// panels is a [k, n] weight matrix packed for sgemm4x16: panel p holds
// columns 16p to 16p+15 of every row, row after row, zero-padded past n.
type panels struct {
	k, n int
	data []float32
}

func packPanels(w []float32, k, n int) *panels {
	np := (n + panelWidth - 1) / panelWidth
	p := &panels{k: k, n: n, data: make([]float32, np*k*panelWidth)}
	for pi := 0; pi < np; pi++ {
		j0 := pi * panelWidth
		j1 := min(j0+panelWidth, n)
		dst := p.data[pi*k*panelWidth:]
		for r := 0; r < k; r++ {
			copy(dst[r*panelWidth:], w[r*n+j0:r*n+j1])
		}
	}
	return p
}

// packWeights packs, when the CPU has the assembly kernel, every float
// constant that is only ever the weight of a dense layer (the second input
// of a MatMul without transposes, or the filter of a 1x1 Conv2D), and drops
// its unpacked data.
func (g *graph) packWeights() {
	if !hasSgemmAsm {
		return
	}
	weight := make([]bool, len(g.nodes)) // read as a dense layer's weights
	other := make([]bool, len(g.nodes))  // read any other way
	for k := range g.nodes {
		n := &g.nodes[k]
		for j, in := range n.inputs {
			src := &g.nodes[in.node]
			if src.konst == nil {
				continue
			}
			if j == 1 && denseWeight(n, src.konst) {
				weight[in.node] = true
			} else {
				other[in.node] = true
			}
		}
	}
	for k := range g.nodes {
		if !weight[k] || other[k] {
			continue
		}
		t := g.nodes[k].konst
		kk, nn := t.shape[t.rank()-2], t.shape[t.rank()-1]
		t.packed = packPanels(t.f, kk, nn)
		t.f = nil
	}
}

// denseWeight reports whether n reads w as a dense layer's weights.
func denseWeight(n *node, w *tensor) bool {
	if w.dt != dtFloat || w.size() == 0 {
		return false
	}
	switch n.op {
	case "MatMul":
		return w.rank() == 2 && !n.boolAttr("transpose_a") && !n.boolAttr("transpose_b")
	case "Conv2D":
		return w.rank() == 4 && w.shape[0] == 1 && w.shape[1] == 1
	}
	return false
}

// parallelMACs is the work (multiply-adds) above which one product is
// split across GOMAXPROCS goroutines by panel.
const parallelMACs = 1 << 22

// denseMatMul sets out [m, n] to a [m, k] times the packed weights. It
// requires hasSgemmAsm.
func denseMatMul(out, a []float32, m int, w *panels) {
	k, n := w.k, w.n
	np := (n + panelWidth - 1) / panelWidth
	// Rows run six at a time, then four; the last m%6%4 rows run padded to
	// four, from a copy.
	six := m - m%6
	full := six + (m-six)&^3
	var tail []float32
	if full < m {
		tail = make([]float32, 4*k)
		copy(tail, a[full*k:m*k])
	}
	run := func(p0, p1 int) {
		var tmp [6 * panelWidth]float32
		for pi := p0; pi < p1; pi++ {
			panel := &w.data[pi*k*panelWidth]
			j0 := pi * panelWidth
			cols := min(panelWidth, n-j0)
			for i := 0; i < six; i += 6 {
				if cols == panelWidth {
					sgemm6x16(k, &a[i*k], k, panel, &out[i*n+j0], n)
					continue
				}
				sgemm6x16(k, &a[i*k], k, panel, &tmp[0], panelWidth)
				for r := 0; r < 6; r++ {
					copy(out[(i+r)*n+j0:(i+r)*n+j0+cols], tmp[r*panelWidth:])
				}
			}
			for i := six; i < full; i += 4 {
				if cols == panelWidth {
					sgemm4x16(k, &a[i*k], k, panel, &out[i*n+j0], n)
					continue
				}
				sgemm4x16(k, &a[i*k], k, panel, &tmp[0], panelWidth)
				for r := 0; r < 4; r++ {
					copy(out[(i+r)*n+j0:(i+r)*n+j0+cols], tmp[r*panelWidth:])
				}
			}
			if tail != nil {
				sgemm4x16(k, &tail[0], k, panel, &tmp[0], panelWidth)
				for r := 0; r < m-full; r++ {
					copy(out[(full+r)*n+j0:(full+r)*n+j0+cols], tmp[r*panelWidth:])
				}
			}
		}
	}
	workers := 1
	if m*k*n >= parallelMACs {
		workers = min(runtime.GOMAXPROCS(0), np)
	}
	if workers <= 1 {
		run(0, np)
		return
	}
	var wg sync.WaitGroup
	for part := 0; part < workers; part++ {
		p0, p1 := part*np/workers, (part+1)*np/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(p0, p1)
		}()
	}
	wg.Wait()
}
