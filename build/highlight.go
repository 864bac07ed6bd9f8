package build

import (
	"go/scanner"
	"go/token"
	"html"
	"html/template"
	"strings"
)

// CSS classes Highlight uses (the console's stylesheet colours them).
const (
	ClassKeyword = "go-kw"
	ClassString  = "go-str"
	ClassNumber  = "go-num"
	ClassComment = "go-com"
	ClassIdent   = "go-id" // predeclared identifiers (int, nil, true, …) only
)

var predeclared = map[string]bool{
	"any": true, "bool": true, "byte": true, "error": true, "float32": true, "float64": true, "int": true, "int64": true,
	"int32": true, "uint": true, "uint64": true, "rune": true, "string": true, "nil": true, "true": true, "false": true,
	"iota": true, "append": true, "len": true, "cap": true, "make": true, "new": true, "panic": true, "recover": true,
	"min": true, "max": true, "delete": true, "copy": true, "clear": true,
}

// Highlight draws Go source as HTML: every byte of src is kept (escaped),
// and tokens from go/scanner are wrapped in spans with the Class* classes.
// It uses no script and no inline style, so it is CSP-safe; it is drawn on
// the server, so the review needs nothing from the browser.
func Highlight(src string) template.HTML {
	var b strings.Builder
	fset := token.NewFileSet()
	file := fset.AddFile("tool.go", -1, len(src))
	var s scanner.Scanner
	// Errors are ignored: unscannable bytes are copied through unstyled.
	s.Init(file, []byte(src), func(token.Position, string) {}, scanner.ScanComments)
	last := 0
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		off := file.Offset(pos)
		if off < last || off > len(src) {
			continue
		}
		text := lit
		if tok.IsOperator() || text == "" {
			text = tok.String()
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // an inserted semicolon: the newline is copied as a gap
		}
		end := min(off+len(text), len(src))
		if src[off:end] != text {
			continue
		}
		b.WriteString(html.EscapeString(src[last:off]))
		class := ""
		switch {
		case tok.IsKeyword():
			class = ClassKeyword
		case tok == token.STRING || tok == token.CHAR:
			class = ClassString
		case tok == token.INT || tok == token.FLOAT || tok == token.IMAG:
			class = ClassNumber
		case tok == token.COMMENT:
			class = ClassComment
		case tok == token.IDENT && predeclared[lit]:
			class = ClassIdent
		}
		if class == "" {
			b.WriteString(html.EscapeString(text))
		} else {
			b.WriteString(`<span class="` + class + `">` + html.EscapeString(text) + `</span>`)
		}
		last = end
	}
	b.WriteString(html.EscapeString(src[last:]))
	return template.HTML(b.String())
}
