package workflows

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/build"
)

// fill sets every field reachable from v to a non-zero value, so a
// conversion that forgets a field shows in the comparison.
func fill(v reflect.Value) {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		v.SetBytes([]byte(`{"x":1}`))
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		v.Set(reflect.ValueOf("any"))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e)
		v.SetMapIndex(reflect.ValueOf("k"), e)
	case reflect.String:
		v.SetString("x-" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0))
		fill(v.Index(1))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	default:
		panic("fill: " + v.Type().String())
	}
}

func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v).Elem())
	return v
}

func sameJSON(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("%s:\n got %s\nwant %s", what, ja, jb)
	}
}

// strictly decodes the JSON of from into a new To, refusing fields To
// lacks: the workflows' type holds nothing its counterpart cannot.
func strictly[To any](t *testing.T, from any) To {
	t.Helper()
	b, _ := json.Marshal(from)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var out To
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%T → %T: %v", from, out, err)
	}
	return out
}

// TestAirlockPayloadsMirrorTheirCounterparts: the workflows' policy,
// review, scan report, built program and build report carry every field
// of the airlock, build and activity types they mirror, with the same
// JSON, both ways; a field added to one side and not the other fails here.
func TestAirlockPayloadsMirrorTheirCounterparts(t *testing.T) {
	p := filled[airlock.Policy]()
	sameJSON(t, "PolicyOf", PolicyOf(p), p)
	if got := PolicyOf(p).Airlock(); !reflect.DeepEqual(got, p) {
		t.Errorf("policy round trip: got %+v, want %+v", got, p)
	}
	wp := filled[Policy]()
	sameJSON(t, "Policy.Airlock", wp.Airlock(), wp)
	sameJSON(t, "Policy → airlock.Policy", strictly[airlock.Policy](t, wp), wp)

	r := filled[airlock.Review]()
	sameJSON(t, "SpecReviewOf", SpecReviewOf(r), r)
	if got := SpecReviewOf(r).Airlock(); !reflect.DeepEqual(got, r) {
		t.Errorf("review round trip: got %+v, want %+v", got, r)
	}
	wr := filled[SpecReview]()
	sameJSON(t, "SpecReview.Airlock", wr.Airlock(), wr)
	sameJSON(t, "SpecReview → airlock.Review", strictly[airlock.Review](t, wr), wr)

	s := filled[activities.ScanSourceOutput]()
	sameJSON(t, "scanReportOf", scanReportOf(s), s)
	ws := filled[ScanReport]()
	sameJSON(t, "ScanReport → activities.ScanSourceOutput", strictly[activities.ScanSourceOutput](t, ws), ws)

	bp := filled[build.Program]()
	sameJSON(t, "builtProgramOf", builtProgramOf(bp), bp)
	wbp := filled[BuiltProgram]()
	sameJSON(t, "BuiltProgram → build.Program", strictly[build.Program](t, wbp), wbp)
	br := filled[build.Report]()
	sameJSON(t, "buildReportOf", buildReportOf(br), br)
	wbr := filled[BuildReport]()
	sameJSON(t, "BuildReport → build.Report", strictly[build.Report](t, wbr), wbr)

	// Empty lists stay empty lists (the review shows [] not null).
	e := SpecReviewOf(airlock.Review{Servers: []string{}, Operations: []airlock.ReviewOperation{}})
	sameJSON(t, "empty lists", e, airlock.Review{Servers: []string{}, Operations: []airlock.ReviewOperation{}})
}

// TestPolicyValidateIsTheAirlocks: a workflow refuses exactly the
// policies the airlock refuses, naming the field.
func TestPolicyValidateIsTheAirlocks(t *testing.T) {
	bad := Policy{RateLimitPerMinute: -1, Credential: &Credential{Kind: "nope", Env: "x"}}
	err := bad.Validate()
	if err == nil || err.Error() != bad.Airlock().Validate().Error() {
		t.Fatalf("Validate = %v, want the airlock's %v", err, bad.Airlock().Validate())
	}
	if err := (Policy{QuotaPerDay: 5}).Validate(); err != nil {
		t.Fatalf("a good policy: %v", err)
	}
}
