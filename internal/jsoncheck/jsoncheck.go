// Package jsoncheck checks what encoding/json lets through silently in a
// request body: a key repeated in one object (the decoder keeps the last,
// so {"amount":1,"amount":500} runs with 500 while a reviewer or a log
// reads 1) and bytes that are not UTF-8 inside a string, or an escape
// that is no character (the decoder replaces either with U+FFFD, so the
// text stored or searched is not the text sent). Both are refused with a
// fault.ErrMalformed error naming the place, as a field path
// ("inputs.amount", "tools[2].manifest"). Keys that differ only in case
// are reported (Scan) for a caller that knows whether they land in one
// struct field.
package jsoncheck

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// frame is one open object or array on the way to the current token.
type frame struct {
	path    string              // the container's own path ("" at the top)
	object  bool                // an object, else an array
	keys    []string            // the object's keys so far, while few
	set     map[string]struct{} // the keys, once there are many
	lower   map[string]string   // the keys by their lower case, likewise
	key     string              // the object's current key
	wantKey bool                // the next string token is a key
	index   int                 // the array's next index
}

// fewKeys is how many keys an object holds in a list, searched in turn,
// before they are indexed: most objects have a few keys, and two maps
// each would cost more than the search.
const fewKeys = 16

// add records key s of the object. dup reports that s was there already;
// first is an earlier key that differs from s only in case ("" if none).
func (f *frame) add(s string) (dup bool, first string) {
	if f.set == nil && len(f.keys) < fewKeys {
		for _, k := range f.keys {
			if k == s {
				return true, ""
			}
			if first == "" && strings.EqualFold(k, s) {
				first = k
			}
		}
		f.keys = append(f.keys, s)
		return false, first
	}
	if f.set == nil {
		f.set, f.lower = make(map[string]struct{}, 2*fewKeys), make(map[string]string, 2*fewKeys)
		for _, k := range f.keys {
			f.set[k] = struct{}{}
			if _, ok := f.lower[strings.ToLower(k)]; !ok {
				f.lower[strings.ToLower(k)] = k
			}
		}
		f.keys = nil
	}
	if _, ok := f.set[s]; ok {
		return true, ""
	}
	f.set[s] = struct{}{}
	low := strings.ToLower(s)
	if k, ok := f.lower[low]; ok {
		return false, k
	}
	f.lower[low] = s
	return false, ""
}

// child is the path of the container's current value.
func (f *frame) child() string {
	if !f.object {
		return f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	if f.path == "" {
		return f.key
	}
	return f.path + "." + f.key
}

// Fold is two keys of one object that differ only in case. encoding/json
// matches a struct's fields ignoring case, so for an object decoded into a
// struct they are one field given twice (the last wins); in a map they are
// two keys. Which it is, only the destination's type tells.
type Fold struct {
	// Object is where the object stands: its keys (strings) and indices
	// (ints) from the top, empty for the top-level object.
	Object []any
	// Keys are the two keys, in the body's order.
	Keys [2]string
}

// maxFolds bounds the folds Scan reports.
const maxFolds = 100

// Check reads body once, token by token, and returns a fault.ErrMalformed
// error naming the first repeated key or the first string that is not
// UTF-8, with root ("" or, for instance, "arguments") before every path.
// Syntax errors are not its business: a body that does not parse is nil
// here and left to the decoder, whose message says where.
func Check(body []byte, root string) error {
	_, err := Scan(body, root)
	return err
}

// Scan is Check, and also reports (up to 100 of) the objects' keys that
// differ only in case, for a caller that knows the destination's type.
func Scan(body []byte, root string) ([]Fold, error) {
	var folds []Fold
	bad := -1 // the offset of the first byte that is not UTF-8
	if !utf8.Valid(body) {
		bad = invalidAt(body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers are not converted, only skipped
	stack := []*frame{}
	where := func() string { // the path of the value being read
		p := root
		if n := len(stack); n > 0 {
			p = join(root, stack[n-1].child())
		}
		if p == "" {
			p = "body"
		}
		return p
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return folds, nil // the end, or a syntax error the decoder reports
		}
		var top *frame
		if n := len(stack); n > 0 {
			top = stack[n-1]
		}
		str, isStr := tok.(string)
		// An escape that is no character (a lone surrogate, "\ud800") is
		// decoded as U+FFFD too: more of them than the raw text spells.
		lost := isStr && (bad < 0 || dec.InputOffset() <= int64(bad)) && strings.ContainsRune(str, utf8.RuneError) &&
			lostRunes(str, body[start:dec.InputOffset()])
		isKey := false
		if s, ok := tok.(string); ok && top != nil && top.object && top.wantKey {
			isKey = true
			if bad >= 0 && dec.InputOffset() > int64(bad) {
				p := join(root, top.path)
				if p == "" {
					p = "body"
				}
				return nil, fault.Malformed(p, "holds a key that is not UTF-8 text (byte %d is 0x%02x)", bad, body[bad])
			}
			if lost {
				p := join(root, top.path)
				if p == "" {
					p = "body"
				}
				return nil, fault.Malformed(p, "holds a key with an escape that is no character (a lone UTF-16 surrogate such as \\ud800)")
			}
			top.key, top.wantKey = s, false
			dup, first := top.add(s)
			if dup {
				return nil, fault.Malformed(where(), "is given more than once; a key may appear once in an object")
			}
			if first != "" && len(folds) < maxFolds {
				folds = append(folds, Fold{Object: objectAt(stack), Keys: [2]string{first, s}})
			}
			continue
		}
		if !isKey && bad >= 0 && dec.InputOffset() > int64(bad) && isStr {
			return nil, fault.Malformed(where(), "is not UTF-8 text: byte %d is 0x%02x", bad, body[bad])
		}
		if lost {
			return nil, fault.Malformed(where(), "holds an escape that is no character (a lone UTF-16 surrogate such as \\ud800)")
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			f := &frame{path: "", object: tok == json.Delim('{')}
			if top != nil {
				f.path = top.child()
			}
			if f.object {
				f.wantKey = true
			}
			stack = append(stack, f)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack); n > 0 {
				top = stack[n-1]
			} else {
				top = nil
			}
		}
		// A value ended: the object wants its next key, the array its
		// next index.
		if top != nil {
			if top.object {
				top.wantKey = true
			} else {
				top.index++
			}
		}
	}
}

// objectAt is where the innermost open object of stack stands.
func objectAt(stack []*frame) []any {
	var at []any
	for _, f := range stack[:len(stack)-1] {
		if f.object {
			at = append(at, f.key)
		} else {
			at = append(at, f.index)
		}
	}
	return at
}

// lostRunes reports whether decoded, a string token, holds more U+FFFD
// than raw, its text in the body, spells: as the character itself or as
// the escape \ufffd. The others stand for escapes that are no character.
func lostRunes(decoded string, raw []byte) bool {
	low := bytes.ToLower(raw) // \uFFFD and \ufffd alike; U+FFFD stays
	spelt := bytes.Count(low, []byte("\uFFFD")) + bytes.Count(low, []byte(`\ufffd`))
	return strings.Count(decoded, "\uFFFD") > spelt
}

// join puts root before path.
func join(root, path string) string {
	switch {
	case root == "":
		return path
	case path == "":
		return root
	case path[0] == '[':
		return root + path
	}
	return root + "." + path
}

// invalidAt is the offset of the first byte of b that does not start a
// valid UTF-8 sequence.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}
