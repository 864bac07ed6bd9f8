package demomodule

import (
	"fmt"
	"strconv"
	"strings"
)

// evalArithmetic evaluates + - * / and parentheses over decimal numbers with
// the usual precedence. It is a recursive-descent parser over the string:
// no variables, no functions, nothing executable.
func evalArithmetic(s string) (float64, error) {
	p := &arith{s: strings.TrimSpace(s)}
	if p.s == "" {
		return 0, fmt.Errorf("empty expression")
	}
	v, err := p.expr(0)
	if err != nil {
		return 0, err
	}
	p.skip()
	if p.i < len(p.s) {
		return 0, fmt.Errorf("unexpected %q at position %d", p.s[p.i], p.i)
	}
	return v, nil
}

type arith struct {
	s string
	i int
}

const maxArithDepth = 64

func (p *arith) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *arith) expr(depth int) (float64, error) {
	v, err := p.term(depth)
	if err != nil {
		return 0, err
	}
	for {
		p.skip()
		if p.i >= len(p.s) || (p.s[p.i] != '+' && p.s[p.i] != '-') {
			return v, nil
		}
		op := p.s[p.i]
		p.i++
		r, err := p.term(depth)
		if err != nil {
			return 0, err
		}
		if op == '+' {
			v += r
		} else {
			v -= r
		}
	}
}

func (p *arith) term(depth int) (float64, error) {
	v, err := p.factor(depth)
	if err != nil {
		return 0, err
	}
	for {
		p.skip()
		if p.i >= len(p.s) || (p.s[p.i] != '*' && p.s[p.i] != '/') {
			return v, nil
		}
		op := p.s[p.i]
		p.i++
		r, err := p.factor(depth)
		if err != nil {
			return 0, err
		}
		if op == '*' {
			v *= r
		} else {
			if r == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			v /= r
		}
	}
}

func (p *arith) factor(depth int) (float64, error) {
	if depth > maxArithDepth {
		return 0, fmt.Errorf("expression nests too deeply")
	}
	p.skip()
	if p.i >= len(p.s) {
		return 0, fmt.Errorf("unexpected end of expression")
	}
	switch c := p.s[p.i]; {
	case c == '-' || c == '+':
		p.i++
		v, err := p.factor(depth + 1)
		if c == '-' {
			v = -v
		}
		return v, err
	case c == '(':
		p.i++
		v, err := p.expr(depth + 1)
		if err != nil {
			return 0, err
		}
		p.skip()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return 0, fmt.Errorf("missing ')' at position %d", p.i)
		}
		p.i++
		return v, nil
	case (c >= '0' && c <= '9') || c == '.':
		start := p.i
		for p.i < len(p.s) && ((p.s[p.i] >= '0' && p.s[p.i] <= '9') || p.s[p.i] == '.') {
			p.i++
		}
		v, err := strconv.ParseFloat(p.s[start:p.i], 64)
		if err != nil {
			return 0, fmt.Errorf("bad number %q", p.s[start:p.i])
		}
		return v, nil
	default:
		return 0, fmt.Errorf("unexpected %q at position %d", c, p.i)
	}
}
