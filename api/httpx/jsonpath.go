package httpx

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/internal/jsoncheck"
)

// jsonPath finds where in body a decoding error of dst happened, as a
// field path ("options.bogus", "events[2].at"), for the two errors
// encoding/json reports without one: an unknown field (named alone) and a
// time that does not parse (not named at all). bad reports whether a value
// at a place of type t under key is the one; "" when none is found.
func jsonPath(body []byte, dst any, bad func(path, key string, known bool, t reflect.Type, v any) bool) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return ""
	}
	t := reflect.TypeOf(dst)
	p, _ := walkJSON(v, t, "", bad)
	return p
}

var timeType = reflect.TypeOf(time.Time{})

func walkJSON(v any, t reflect.Type, path string, bad func(string, string, bool, reflect.Type, any) bool) (string, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "", false
	}
	switch val := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var fields map[string]reflect.Type
		if t.Kind() == reflect.Struct && t != timeType {
			fields = jsonFields(t)
		}
		for _, k := range keys {
			child := k
			if path != "" {
				child = path + "." + k
			}
			var ft reflect.Type
			known := true
			switch {
			case fields != nil:
				ft, known = fields[strings.ToLower(k)]
			case t.Kind() == reflect.Map:
				ft = t.Elem()
			default:
				continue
			}
			if bad(child, k, known, ft, val[k]) {
				return child, true
			}
			if known {
				if p, ok := walkJSON(val[k], ft, child, bad); ok {
					return p, true
				}
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return "", false
		}
		for i, e := range val {
			child := path + "[" + strconv.Itoa(i) + "]"
			if bad(child, "", true, t.Elem(), e) {
				return child, true
			}
			if p, ok := walkJSON(e, t.Elem(), child, bad); ok {
				return p, true
			}
		}
	}
	return "", false
}

// jsonFields maps a struct's JSON names, lower-cased as encoding/json
// matches them, to their types, with embedded structs' fields promoted.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[strings.ToLower(name)] = f.Type
	}
	return out
}

// unknownFieldPath is the path of the first field named name that dst has
// no place for.
func unknownFieldPath(body []byte, dst any, name string) string {
	return jsonPath(body, dst, func(_, key string, known bool, _ reflect.Type, _ any) bool {
		return !known && key == name
	})
}

// timePath is the path of the first time field holding raw, a text that
// does not parse as RFC 3339.
func timePath(body []byte, dst any, raw string) string {
	return jsonPath(body, dst, func(_, _ string, known bool, t reflect.Type, v any) bool {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		s, ok := v.(string)
		return known && t == timeType && ok && s == raw
	})
}

// typePath is the path, with its indices, of the first value of JSON kind
// kind ("string", "number", …) at field, a dotted path without indices as
// encoding/json names a type error ("events.success").
func typePath(body []byte, dst any, field, kind string) string {
	field = dropEmbedded(reflect.TypeOf(dst), field)
	return jsonPath(body, dst, func(path, _ string, known bool, _ reflect.Type, v any) bool {
		return known && indexRe.ReplaceAllString(path, "") == field && jsonKindOf(v) == kind
	})
}

var indexRe = regexp.MustCompile(`\[[0-9]+\]`)

// dropEmbedded removes from a type error's dotted field the names of the
// embedded structs on its way ("events.Event.latencyMs" is
// "events.latencyMs" in the JSON), so the path names what the client sent,
// never a Go type.
func dropEmbedded(t reflect.Type, field string) string {
	var out []string
	for _, seg := range strings.Split(field, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			out, t = append(out, seg), nil
			continue
		}
		fields := jsonFields(t)
		if ft, ok := fields[strings.ToLower(seg)]; ok {
			out, t = append(out, seg), ft
			continue
		}
		if f, ok := t.FieldByName(seg); ok && f.Anonymous {
			t = f.Type // an embedded struct: no segment of the JSON
			continue
		}
		out, t = append(out, seg), nil
	}
	return strings.Join(out, ".")
}

// jsonKindOf names a decoded JSON value's kind as encoding/json's type
// errors do.
func jsonKindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			return "number " + v.String()
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// foldedField is the first of folds (two keys of one object that differ
// only in case) whose object dst decodes into a struct that has a field of
// that name: encoding/json matches field names ignoring case, so the two
// keys are one field given twice, and the last would silently win. Two
// such keys of a map (a run's inputs) are two keys, and pass.
func foldedField(folds []jsoncheck.Fold, dst any) error {
	for _, f := range folds {
		t := typeAt(reflect.TypeOf(dst), f.Object)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct || t == timeType {
			continue
		}
		if _, ok := jsonFields(t)[strings.ToLower(f.Keys[1])]; !ok {
			continue // an unknown field, which the decoder names
		}
		path := f.Keys[1]
		if at := pathOf(f.Object); at != "" {
			path = at + "." + f.Keys[1]
		}
		return fault.Malformed(path, "is given twice, as %q and %q: field names match ignoring case, so give it once", f.Keys[0], f.Keys[1])
	}
	return nil
}

// typeAt is the type a value at the keys and indices of at decodes into
// from t, nil when there is none.
func typeAt(t reflect.Type, at []any) reflect.Type {
	for _, seg := range at {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil {
			return nil
		}
		switch seg := seg.(type) {
		case string:
			switch {
			case t.Kind() == reflect.Struct && t != timeType:
				t = jsonFields(t)[strings.ToLower(seg)]
			case t.Kind() == reflect.Map:
				t = t.Elem()
			default:
				return nil
			}
		case int:
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return nil
			}
			t = t.Elem()
		}
	}
	return t
}

// pathOf writes keys and indices as a field path ("events[1].at").
func pathOf(at []any) string {
	var b strings.Builder
	for _, seg := range at {
		switch seg := seg.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		case int:
			b.WriteString("[" + strconv.Itoa(seg) + "]")
		}
	}
	return b.String()
}
