package use

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// modelJSON is the part of a TF.js graph-model file (model.json) this runner
// reads.
type modelJSON struct {
	Format        string `json:"format"`
	ModelTopology struct {
		Node []nodeDef `json:"node"`
	} `json:"modelTopology"`
	WeightsManifest []struct {
		Paths   []string     `json:"paths"`
		Weights []weightSpec `json:"weights"`
	} `json:"weightsManifest"`
}

type nodeDef struct {
	Name  string          `json:"name"`
	Op    string          `json:"op"`
	Input []string        `json:"input"`
	Attr  map[string]attr `json:"attr"`
}

type attr struct {
	I    *string         `json:"i"`
	B    *bool           `json:"b"`
	S    []int           `json:"s"`
	Type json.RawMessage `json:"type"`
	List *struct {
		I []string `json:"i"`
	} `json:"list"`
}

type weightSpec struct {
	Name         string `json:"name"`
	Shape        []int  `json:"shape"`
	Dtype        string `json:"dtype"`
	Quantization *struct {
		Dtype string   `json:"dtype"`
		Min   *float64 `json:"min"`
		Scale *float64 `json:"scale"`
	} `json:"quantization"`
}

// node is a compiled graph node: inputs resolved to (node, output) pairs.
type node struct {
	name   string
	op     string
	inputs []ref
	attrs  map[string]attr
	konst  *tensor // Const value
	nOut   int
}

type ref struct{ node, out int }

// graph is an executable TF.js graph model. It is immutable after load and
// safe for concurrent runs.
type graph struct {
	nodes  []node
	order  []int // topological execution order
	inputs map[string]int
	output int
	// release[s] lists the nodes whose outputs no step after order[s]
	// reads: run drops them there, so a run holds only what is still
	// needed instead of every intermediate tensor.
	release [][]int
}

func (a attr) int() (int, error) {
	if a.I == nil {
		return 0, errors.New("missing int attr")
	}
	return strconv.Atoi(*a.I)
}

func (a attr) ints() ([]int, error) {
	if a.List == nil {
		return nil, nil
	}
	out := make([]int, len(a.List.I))
	for k, s := range a.List.I {
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// dtype decodes a DataType attr given either as the enum number or its name.
func (a attr) dtype() (dtype, error) {
	var s string
	if err := json.Unmarshal(a.Type, &s); err != nil {
		var n int
		if err := json.Unmarshal(a.Type, &n); err != nil {
			return 0, fmt.Errorf("bad type attr %s", a.Type)
		}
		s = strconv.Itoa(n)
	}
	switch s {
	case "1", "DT_FLOAT":
		return dtFloat, nil
	case "3", "9", "DT_INT32", "DT_INT64":
		return dtInt, nil
	case "10", "DT_BOOL":
		return dtBool, nil
	}
	return 0, fmt.Errorf("unsupported type %s", s)
}

func (n *node) intAttr(name string, def int) (int, error) {
	a, ok := n.attrs[name]
	if !ok || a.I == nil {
		return def, nil
	}
	return a.int()
}

func (n *node) boolAttr(name string) bool {
	a, ok := n.attrs[name]
	return ok && a.B != nil && *a.B
}

// loadGraph reads model.json and its weight shards from dir.
func loadGraph(dir string) (*graph, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, fmt.Errorf("read model.json: %w", err)
	}
	var mj modelJSON
	if err := json.Unmarshal(raw, &mj); err != nil {
		return nil, fmt.Errorf("parse model.json: %w", err)
	}
	if len(mj.ModelTopology.Node) == 0 {
		return nil, fmt.Errorf("model.json: %w: no graph nodes", ErrBadModel)
	}
	weights := map[string]*tensor{}
	for _, group := range mj.WeightsManifest {
		var buf []byte
		for _, p := range group.Paths {
			if filepath.IsAbs(p) || strings.Contains(p, "..") {
				return nil, fmt.Errorf("weights path %q: %w", p, ErrBadModel)
			}
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				return nil, fmt.Errorf("read weights: %w", err)
			}
			buf = append(buf, b...)
		}
		for _, w := range group.Weights {
			t, n, err := decodeWeight(w, buf)
			if err != nil {
				return nil, fmt.Errorf("weight %q: %w", w.Name, err)
			}
			weights[w.Name] = t
			buf = buf[n:]
		}
	}
	return compile(mj.ModelTopology.Node, weights)
}

// decodeWeight decodes one weight from the front of buf and reports how many
// bytes it used. Affine uint8/uint16 quantisation is dequantised to float32.
func decodeWeight(w weightSpec, buf []byte) (*tensor, int, error) {
	n := numElems(w.Shape)
	shape := cloneInts(w.Shape)
	if q := w.Quantization; q != nil {
		var width int
		switch q.Dtype {
		case "uint8":
			width = 1
		case "uint16":
			width = 2
		default:
			return nil, 0, fmt.Errorf("%w: quantization %q", ErrBadModel, q.Dtype)
		}
		if q.Min == nil || q.Scale == nil || w.Dtype != "float32" {
			return nil, 0, fmt.Errorf("%w: unsupported quantized %s weight", ErrBadModel, w.Dtype)
		}
		if len(buf) < n*width {
			return nil, 0, fmt.Errorf("%w: weights data too short", ErrBadModel)
		}
		t := newFloat(shape)
		for k := range t.f {
			var v uint16
			if width == 1 {
				v = uint16(buf[k])
			} else {
				v = binary.LittleEndian.Uint16(buf[2*k:])
			}
			t.f[k] = float32(float64(v)**q.Scale + *q.Min)
		}
		return t, n * width, nil
	}
	switch w.Dtype {
	case "float32", "int32":
		if len(buf) < 4*n {
			return nil, 0, fmt.Errorf("%w: weights data too short", ErrBadModel)
		}
		if w.Dtype == "float32" {
			t := newFloat(shape)
			for k := range t.f {
				t.f[k] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*k:]))
			}
			return t, 4 * n, nil
		}
		t := newInt(shape)
		for k := range t.i {
			t.i[k] = int32(binary.LittleEndian.Uint32(buf[4*k:]))
		}
		return t, 4 * n, nil
	case "bool":
		if len(buf) < n {
			return nil, 0, fmt.Errorf("%w: weights data too short", ErrBadModel)
		}
		t := newBool(shape)
		for k := range t.i {
			if buf[k] != 0 {
				t.i[k] = 1
			}
		}
		return t, n, nil
	}
	return nil, 0, fmt.Errorf("%w: dtype %q", ErrBadModel, w.Dtype)
}

// compile resolves inputs, checks every op is supported and orders the nodes.
func compile(defs []nodeDef, weights map[string]*tensor) (*graph, error) {
	g := &graph{inputs: map[string]int{}}
	byName := map[string]int{}
	for k, d := range defs {
		byName[d.Name] = k
	}
	consumed := make([]bool, len(defs))
	for k, d := range defs {
		n := node{name: d.Name, op: d.Op, attrs: d.Attr, nOut: 1}
		if _, ok := kernels[d.Op]; !ok && d.Op != "Const" && d.Op != "Placeholder" {
			return nil, fmt.Errorf("node %q: %w: op %s", d.Name, ErrBadModel, d.Op)
		}
		if d.Op == "SplitV" {
			num, err := n.intAttr("num_split", 0)
			if err != nil || num <= 0 {
				return nil, fmt.Errorf("node %q: %w: bad num_split", d.Name, ErrBadModel)
			}
			n.nOut = num
		}
		for _, in := range d.Input {
			if strings.HasPrefix(in, "^") {
				continue // control dependency: irrelevant for a pure graph
			}
			name, out := in, 0
			if i := strings.LastIndexByte(in, ':'); i >= 0 {
				v, err := strconv.Atoi(in[i+1:])
				if err == nil {
					name, out = in[:i], v
				}
			}
			j, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("node %q: %w: unknown input %q", d.Name, ErrBadModel, in)
			}
			n.inputs = append(n.inputs, ref{j, out})
			consumed[j] = true
		}
		switch d.Op {
		case "Const":
			t, ok := weights[d.Name]
			if !ok {
				return nil, fmt.Errorf("node %q: %w: constant without weights", d.Name, ErrBadModel)
			}
			n.konst = t
		case "Placeholder":
			g.inputs[d.Name] = k
		}
		g.nodes = append(g.nodes, n)
	}
	g.output = -1
	for k, n := range g.nodes {
		if !consumed[k] && n.op != "Const" && n.op != "Placeholder" {
			if g.output >= 0 {
				return nil, fmt.Errorf("%w: several outputs (%q, %q)", ErrBadModel, g.nodes[g.output].name, n.name)
			}
			g.output = k
		}
	}
	if g.output < 0 {
		return nil, fmt.Errorf("%w: no output node", ErrBadModel)
	}
	// Depth-first topological order of what the output needs.
	state := make([]uint8, len(g.nodes))
	var visit func(int) error
	visit = func(k int) error {
		switch state[k] {
		case 1:
			return fmt.Errorf("%w: cycle at %q", ErrBadModel, g.nodes[k].name)
		case 2:
			return nil
		}
		state[k] = 1
		for _, in := range g.nodes[k].inputs {
			if err := visit(in.node); err != nil {
				return err
			}
		}
		state[k] = 2
		g.order = append(g.order, k)
		return nil
	}
	if err := visit(g.output); err != nil {
		return nil, err
	}
	last := make([]int, len(g.nodes))
	for s, k := range g.order {
		for _, in := range g.nodes[k].inputs {
			last[in.node] = s
		}
	}
	g.release = make([][]int, len(g.order))
	for s, k := range g.order {
		if k != g.output && last[k] > s { // a consumer runs after its inputs
			g.release[last[k]] = append(g.release[last[k]], k)
		}
	}
	g.packWeights()
	return g, nil
}

// run executes the graph for the given placeholder values and returns the
// output tensor. Intermediate float buffers come from, and return to, x
// (nil: fresh allocations); the output's buffer is x's too, so the caller
// reads it before x serves another pass.
func (g *graph) run(feeds map[string]*tensor, x *arena) (*tensor, error) {
	vals := make([][]*tensor, len(g.nodes))
	refs := bufRefs{}
	for step, k := range g.order {
		n := &g.nodes[k]
		switch n.op {
		case "Const":
			vals[k] = []*tensor{n.konst}
			refs.add(n.konst, pinned)
			continue
		case "Placeholder":
			t, ok := feeds[n.name]
			if !ok {
				return nil, fmt.Errorf("run: missing input %q", n.name)
			}
			vals[k] = []*tensor{t}
			refs.add(t, pinned)
			continue
		}
		args := make([]*tensor, len(n.inputs))
		for j, in := range n.inputs {
			outs := vals[in.node]
			if in.out >= len(outs) {
				return nil, fmt.Errorf("run: node %q: input %d has no output %d", n.name, j, in.out)
			}
			args[j] = outs[in.out]
		}
		outs, err := kernels[n.op](x, n, args)
		if err != nil {
			return nil, fmt.Errorf("run: %s %q: %w", n.op, n.name, err)
		}
		vals[k] = outs
		for _, t := range outs {
			refs.add(t, 1)
		}
		for _, j := range g.release[step] {
			for _, t := range vals[j] {
				refs.drop(t, x)
			}
			vals[j] = nil
		}
	}
	return vals[g.output][0], nil
}
