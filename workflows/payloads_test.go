package workflows

import (
	"encoding"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/payloads/v1.json with today's payload shapes")

// payloadRoles names every payload that crosses a workflow's boundary by
// its role (a workflow's input or result, a signal, an update, a query
// answer), with the type that holds it: the shapes are keyed by role, so
// renaming a Go type changes nothing while its JSON stays.
func payloadRoles() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for wf, p := range workflowPayloads {
		if p.in != nil {
			out[wf+".input"] = p.in
		}
		if p.out != nil {
			out[wf+".result"] = p.out
		}
	}
	for name, t := range messagePayloads {
		out["message "+name] = t
	}
	out["NovelVerbWorkflow.query "+ProgressQuery] = typeOf[Progress]()
	out["AirlockWorkflow.query "+ReviewQuery] = typeOf[AirlockState]()
	out["ReindexWorkflow.query "+ReindexQuery] = typeOf[ReindexProgress]()
	out["RetrainWorkflow.query "+RetrainQuery] = typeOf[RetrainResult]()
	out["BuildToolWorkflow.query "+BuildQuery] = typeOf[BuildState]()
	return out
}

// TestPayloadShapes: the JSON shape of every payload type (each field's
// path and kind, nested types included) is the one recorded in
// testdata/payloads/v1.json, version 1 of the payloads. A field that is
// gone, renamed or of another kind breaks the histories of running
// workflows: keep the type and add a new one (FooV2) behind a
// workflow.GetVersion branch instead. A new field is compatible when old
// histories may lack it; record it with -update.
func TestPayloadShapes(t *testing.T) {
	got := map[string]string{}
	for role, typ := range payloadRoles() {
		shape(typ, role, got, map[reflect.Type]bool{})
	}
	path := filepath.Join("testdata", "payloads", "v1.json")
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[p]; {
		case !ok:
			t.Errorf("%s (%s) is gone: recorded histories and running workflows hold it; add a versioned type instead", p, want[p])
		case g != want[p]:
			t.Errorf("%s is %s, was %s: recorded histories hold the old kind; add a versioned type instead", p, g, want[p])
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			t.Errorf("%s (%s) is new: if old histories may lack it, record it with go test ./workflows -run TestPayloadShapes -update", p, got[p])
		}
	}
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	durationType  = reflect.TypeFor[time.Duration]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// shape records the JSON kind of t at path in out, and of everything
// inside it: "string", "number", "bool", "time", "any", "[]", "{}" (an
// object, its fields at path.field), "map" (its values at path[*]), or
// "custom <type>" for a type that encodes itself.
func shape(t reflect.Type, path string, out map[string]string, open map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		out[path] = "time"
		return
	case t == durationType:
		out[path] = "number"
		return
	case t == rawType || t.Kind() == reflect.Interface:
		out[path] = "any"
		return
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType),
		t.Kind() != reflect.String && (t.Implements(textType) || reflect.PointerTo(t).Implements(textType)):
		out[path] = "custom " + t.String()
		return
	}
	switch t.Kind() {
	case reflect.String:
		out[path] = "string"
	case reflect.Bool:
		out[path] = "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		out[path] = "number"
	case reflect.Slice, reflect.Array:
		out[path] = "[]"
		shape(t.Elem(), path+"[]", out, open)
	case reflect.Map:
		out[path] = "map"
		shape(t.Elem(), path+"[*]", out, open)
	case reflect.Struct:
		out[path] = "{}"
		if open[t] {
			return // a recursive type: its fields are recorded where it opened
		}
		open[t] = true
		defer delete(open, t)
		fields(t, path, out, open)
	default:
		out[path] = "unsupported " + t.String()
	}
}

// fields records t's JSON fields under path, flattening embedded structs
// as encoding/json does.
func fields(t reflect.Type, path string, out map[string]string, open map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				fields(ft, path, out, open)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		shape(ft, path+"."+name, out, open)
	}
}
