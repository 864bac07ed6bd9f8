package airlock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

func titled(title string) *openapi3.T { return &openapi3.T{Info: &openapi3.Info{Title: title}} }

// Two specs with the same title get different wrapper names, each keeps
// its own on every later claim, and a name recorded by an approval from
// before owners were kept stays that approval's.
func TestWrapperNamesAreUniquePerSpec(t *testing.T) {
	f := &Files{Root: t.TempDir()}
	doc := titled("Swagger Petstore")
	first, err := f.ClaimWrapperName(doc, "https://a.example/petstore.yml", "airlock-1")
	if err != nil || first.Name != "swagger_petstore" || first.Warning() != "" {
		t.Fatalf("first: %+v %v", first, err)
	}
	peek, err := f.WrapperName(doc, "https://a.example/petstore-expanded.yml", "airlock-2")
	if err != nil || peek.Name != "swagger_petstore_petstore_expanded" || peek.TakenBy != "https://a.example/petstore.yml" ||
		!peek.Reserved || !strings.Contains(peek.Warning(), `"swagger_petstore" is reserved by another spec's pending review`) {
		t.Fatalf("peek: %+v %v", peek, err)
	}
	second, err := f.ClaimWrapperName(doc, "https://a.example/petstore-expanded.yml", "airlock-2")
	if err != nil || second.Name != peek.Name {
		t.Fatalf("second: %+v %v", second, err)
	}
	// Same file name on another host: the hash candidate.
	third, err := f.ClaimWrapperName(doc, "https://b.example/petstore-expanded.yml", "airlock-3")
	if err != nil || !strings.HasPrefix(third.Name, "swagger_petstore_") || third.Name == second.Name || third.Name == first.Name {
		t.Fatalf("third: %+v %v", third, err)
	}
	again, err := f.ClaimWrapperName(doc, "https://a.example/petstore.yml", "airlock-9")
	if err != nil || again.Name != first.Name {
		t.Fatalf("the first spec again (a new version): %+v %v", again, err)
	}
	// A legacy approval (no owner file, no location) is owned by its id.
	if err := f.SaveApproval(Approval{ID: "airlock-old", Slug: "pet_clinic"}); err != nil {
		t.Fatal(err)
	}
	other, err := f.ClaimWrapperName(titled("Pet Clinic"), "https://c.example/vets.yaml", "airlock-new")
	if err != nil || other.Name != "pet_clinic_vets" || other.TakenBy != "airlock-old" {
		t.Fatalf("legacy name: %+v %v", other, err)
	}
	mine, err := f.ClaimWrapperName(titled("Pet Clinic"), "https://c.example/old.yaml", "airlock-old")
	if err != nil || mine.Name != "pet_clinic" {
		t.Fatalf("legacy owner: %+v %v", mine, err)
	}
	// Every candidate taken: a conflict, never a shared name.
	g := &Files{Root: t.TempDir()}
	loc := "https://d.example/x.yaml"
	for _, name := range nameCandidates(doc, loc) {
		if ok, err := g.claim(name, "https://elsewhere.example/"+name); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if _, err := g.ClaimWrapperName(doc, loc, "airlock-x"); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("all taken: %v", err)
	}
}

type failingRegistrar struct{}

func (failingRegistrar) RegisterManifests(context.Context, []tool.Manifest) ([]string, error) {
	return nil, errors.New("registry down")
}

func (failingRegistrar) RetireTools(context.Context, string, []string, string) ([]string, error) {
	return nil, errors.New("registry down")
}

// Approving a second spec with the same title ("Pet Clinic") leaves the
// first's wrapper, approval and tools working; a failed re-approval of the
// first spec does not touch the wrapper its tools run; the review of the
// second spec says its name is taken and which name it gets.
func TestSameTitleSpecsNeverReplaceEachOther(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; skipped with -short")
	}
	ctx := context.Background()
	pets, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t)
	files := &Files{Root: t.TempDir()}
	hashA, err := files.PutSpec(context.Background(), pets)
	if err != nil {
		t.Fatal(err)
	}
	hashB, err := files.PutSpec(context.Background(), append(append([]byte{}, pets...), "\n# the expanded edition\n"...))
	if err != nil {
		t.Fatal(err)
	}
	locA, locB := "https://specs.example/petstore.yaml", "https://specs.example/petstore-expanded.yaml"
	api := petsAPI(t)
	ob := testOnboarder(t, ctx)
	onb := &Onboarding{Onboarder: ob, Files: files, Definitions: store, Registrar: &fakeRegistrar{}}
	resA, err := onb.Approve(ctx, "airlock-a", hashA, locA, Policy{BaseURL: api.URL, Operations: []string{"listPets"}})
	if err != nil || !resA.Outcome.OK() || len(resA.ToolIDs) != 1 || resA.ToolIDs[0] != "pet_clinic.list_pets" {
		t.Fatalf("approve A: %+v %v", resA, err)
	}

	dataB, _ := files.Spec(context.Background(), hashB)
	nB, err := codegen.Normalise(ctx, dataB)
	if err != nil {
		t.Fatal(err)
	}
	review := BuildReview(nB, hashB, locB)
	if err := files.NameReview(&review, nB); err != nil {
		t.Fatal(err)
	}
	if review.Slug != "pet_clinic_petstore_expanded" || review.NameTakenBy != locA || !strings.Contains(strings.Join(review.Warnings, " "), "already used") {
		t.Fatalf("review of B: slug %q taken by %q, warnings %v", review.Slug, review.NameTakenBy, review.Warnings)
	}

	resB, err := onb.Approve(ctx, "airlock-b", hashB, locB, Policy{BaseURL: api.URL, Operations: []string{"listPets"}})
	if err != nil || !resB.Outcome.OK() || len(resB.ToolIDs) != 1 || resB.ToolIDs[0] != "pet_clinic_petstore_expanded.list_pets" {
		t.Fatalf("approve B: %+v %v", resB, err)
	}
	rt := &Runtime{Files: files, Executor: &Executor{Ledger: &MemoryLedger{}}}
	run := func(id string) {
		t.Helper()
		out, err := rt.RunWrapped(ctx, id, map[string]any{"limit": 5}, access.Caller{})
		if err != nil || !out.Success {
			t.Fatalf("run %s: %+v %v", id, out, err)
		}
	}
	run("pet_clinic.list_pets")
	run("pet_clinic_petstore_expanded.list_pets")
	if a, _ := files.Approval("pet_clinic"); a.ID != "airlock-a" || a.Location != locA {
		t.Fatalf("A's approval after B: %+v", a)
	}

	// A re-approval of A that fails after building leaves A's wrapper as it was.
	before, _ := files.Approval("pet_clinic")
	failing := &Onboarding{Onboarder: onb.Onboarder, Files: files, Definitions: store, Registrar: failingRegistrar{}}
	resA2, err := failing.Approve(ctx, "airlock-a2", hashA, locA, Policy{BaseURL: api.URL, Operations: []string{"deletePet"}})
	if err != nil || resA2.Outcome.OK() || resA2.Outcome.Stage != StageManifest {
		t.Fatalf("failing re-approval: %+v %v", resA2, err)
	}
	if after, _ := files.Approval("pet_clinic"); after.ID != before.ID || after.Binary != before.Binary {
		t.Fatalf("approval after a failed re-approval: %+v, was %+v", after, before)
	}
	if _, err := os.Stat(before.Binary); err != nil {
		t.Fatalf("A's wrapper after a failed re-approval: %v", err)
	}
	run("pet_clinic.list_pets")
	builds, _ := filepath.Glob(filepath.Join(files.WrapperDir("pet_clinic"), "build-*"))
	if len(builds) != 1 {
		t.Fatalf("build directories left: %v", builds)
	}
}

// Two specs with the same title pending at once: the first review reserves
// the title's name, the second shows the name it will actually get and
// warns that a pending review holds the title's name; approvals then give
// exactly the names the reviews showed. A review that ends without an
// approval gives its name back, unless an approval or another review of
// the same location still holds it.
func TestPendingReviewsOfTheSameTitleShowTheirNames(t *testing.T) {
	f := &Files{Root: t.TempDir()}
	n := &codegen.Normalised{Doc: titled("Zoo API")}
	hash := func(s string) string { return strings.Repeat(s, 64) }
	locA, locB, locC := "https://a.example/zoo.yaml", "https://b.example/zoo.yaml", "https://c.example/animals.yaml"
	review := func(loc, h string) Review {
		t.Helper()
		r := Review{SpecHash: h, Location: loc}
		if err := f.NameReview(&r, n); err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := review(locA, hash("a"))
	if a.Slug != "zoo_api" || a.NameTakenBy != "" || len(a.Warnings) != 0 {
		t.Fatalf("first review: %+v", a)
	}
	b := review(locB, hash("b"))
	if b.Slug == "zoo_api" || !strings.HasPrefix(b.Slug, "zoo_api_") || b.NameTakenBy != locA || !b.NamePending ||
		len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "reserved by another spec's pending review ("+locA+")") ||
		!strings.Contains(b.Warnings[0], b.Slug+".<operation>") {
		t.Fatalf("second review: %+v", b)
	}
	// The second is approved first: it gets the name its review showed.
	gotB, err := f.ClaimWrapperName(n.Doc, locB, "airlock-b")
	if err != nil || gotB.Name != b.Slug {
		t.Fatalf("approve B: %+v %v, review showed %s", gotB, err, b.Slug)
	}
	// A second version of A (same location) is reviewed while the first
	// is pending: same name. The first version's rejection keeps it.
	a2 := review(locA, hash("c"))
	if a2.Slug != "zoo_api" || len(a2.Warnings) != 0 {
		t.Fatalf("A's second version: %+v", a2)
	}
	if err := f.ReleaseName(a.Slug, locA, hash("a")); err != nil {
		t.Fatal(err)
	}
	if c := review(locC, hash("d")); c.Slug == "zoo_api" || c.NameTakenBy != locA {
		t.Fatalf("while A's second version is pending: %+v", c)
	}
	// Both of A's reviews ended without an approval: the name is free, and
	// B keeps the name it was shown and approved with.
	if err := f.ReleaseName(a2.Slug, locA, hash("c")); err != nil {
		t.Fatal(err)
	}
	if again, err := f.ClaimWrapperName(n.Doc, locB, "airlock-b2"); err != nil || again.Name != b.Slug {
		t.Fatalf("B after A gave the name back: %+v %v", again, err)
	}
	if err := f.ReleaseName("zoo_api_animals", locC, hash("d")); err != nil {
		t.Fatal(err)
	}
	e := review("https://e.example/zoo.yaml", hash("e"))
	if e.Slug != "zoo_api" || len(e.Warnings) != 0 {
		t.Fatalf("after the reservations ended: %+v", e)
	}
	// An approved name is never given back.
	if err := f.SaveApproval(Approval{ID: "airlock-e", Slug: "zoo_api", Location: "https://e.example/zoo.yaml"}); err != nil {
		t.Fatal(err)
	}
	if err := f.ReleaseName("zoo_api", "https://e.example/zoo.yaml", hash("e")); err != nil {
		t.Fatal(err)
	}
	if other := review("https://f.example/other.yaml", hash("f")); other.Slug == "zoo_api" || other.NamePending ||
		!strings.Contains(strings.Join(other.Warnings, " "), "already used by another spec") {
		t.Fatalf("after the approval: %+v", other)
	}
	if err := f.ReleaseName("../x", locA, hash("a")); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("a bad name: %v", err)
	}
}
