package airlock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// A wrapper's name prefixes its tools' ids and names its directory, so it
// must be unique per spec: two specs with the same title (petstore.yml and
// petstore-expanded.yml are both "Swagger Petstore") would otherwise share
// one directory, and approving the second would replace the first's
// wrapper and approval under its active tools. A spec is known by its
// location; the first spec to claim a name owns it (an "owner" file in the
// wrapper's directory, or, for approvals recorded before owners were, the
// approval itself), and another spec gets the next free candidate. A spec
// claims its name when its review is prepared (ReserveName), so the review
// shows the name an approval gives it, and gives it back when the review
// ends without an approval (ReleaseName).

const ownerFile = "owner"

// NameChoice is the wrapper name a spec gets.
type NameChoice struct {
	// Name is the wrapper name ("swagger_petstore_petstore_expanded").
	Name string `json:"name"`
	// Preferred is the name its title gives ("swagger_petstore").
	Preferred string `json:"preferred"`
	// TakenBy names the spec that owns Preferred when Name differs.
	TakenBy string `json:"takenBy,omitempty"`
	// Reserved is true when TakenBy is a pending review, not an approval.
	Reserved bool `json:"reserved,omitempty"`
}

// Warning says why Name is not Preferred ("" when it is).
func (c NameChoice) Warning() string {
	switch {
	case c.Name == c.Preferred:
		return ""
	case c.TakenBy == "":
		return fmt.Sprintf("this spec keeps the name %s it was given before: its tools will be named %s.<operation>", c.Name, c.Name)
	case c.Reserved:
		return fmt.Sprintf("the name %q is reserved by another spec's pending review (%s): this spec's tools will be named %s.<operation>", c.Preferred, c.TakenBy, c.Name)
	}
	return fmt.Sprintf("the name %q is already used by another spec (%s): this spec's tools will be named %s.<operation>", c.Preferred, c.TakenBy, c.Name)
}

// nameCandidates are the names a spec may get, in order: its title's slug,
// that slug with the spec's file name, that slug with a short hash of its
// location (unique in practice).
func nameCandidates(doc *openapi3.T, location string) []string {
	stem := strings.TrimSuffix(filepath.Base(location), filepath.Ext(location))
	base := Slug(doc, stem)
	out := []string{base}
	if s := strings.Trim(slugClean.ReplaceAllString(strings.ToLower(stem), "_"), "_"); s != "" && s != base && !strings.HasSuffix(base, "_"+s) {
		out = append(out, clipName(base+"_"+s, 48))
	}
	sum := sha256.Sum256([]byte(location))
	return append(out, clipName(base, 39)+"_"+hex.EncodeToString(sum[:4]))
}

func clipName(s string, n int) string {
	if len(s) > n {
		s = strings.TrimRight(s[:n], "_")
	}
	return s
}

// owner reports who owns a wrapper name: the location in its owner file,
// else its approval's location, else (an approval recorded before either
// was kept) its approval id. ok is false for a free name; approved is
// false for a name only a pending review has reserved.
func (f *Files) owner(name string) (location, approvalID string, ok, approved bool, err error) {
	a, err := f.Approval(name)
	switch {
	case err == nil:
		approved = true
	case !errors.Is(err, fault.ErrNotFound):
		return "", "", false, false, err
	}
	b, err := os.ReadFile(filepath.Join(f.WrapperDir(name), ownerFile))
	if err == nil {
		return string(b), "", true, approved, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", "", false, false, fmt.Errorf("airlock: owner of %s: %w", name, err)
	}
	if !approved {
		return "", "", false, false, nil
	}
	return a.Location, a.ID, true, true, nil
}

// WrapperName is the name the spec at location would get now, without
// claiming it.
func (f *Files) WrapperName(doc *openapi3.T, location, approvalID string) (NameChoice, error) {
	return f.pickName(doc, location, approvalID, false)
}

// ClaimWrapperName reserves the spec's wrapper name for it and returns it:
// a candidate it already owns (a spec keeps its name), else the first it
// can claim. Claiming is atomic, so two specs never get the same name.
func (f *Files) ClaimWrapperName(doc *openapi3.T, location, approvalID string) (NameChoice, error) {
	return f.pickName(doc, location, approvalID, true)
}

func (f *Files) pickName(doc *openapi3.T, location, approvalID string, claim bool) (NameChoice, error) {
	cands := nameCandidates(doc, location)
	choice := NameChoice{Preferred: cands[0]}
	var owned, free []string
	for _, name := range cands {
		loc, id, ok, _, err := f.owner(name)
		if err != nil {
			return choice, err
		}
		switch {
		case !ok:
			free = append(free, name)
		case loc == location && loc != "", loc == "" && id == approvalID:
			owned = append(owned, name)
		}
	}
	for _, name := range append(owned, free...) {
		if claim {
			ok, err := f.claim(name, location)
			if err != nil {
				return choice, err
			}
			if !ok {
				continue // another spec claimed it in the meantime
			}
		}
		choice.Name = name
		break
	}
	if choice.Name != choice.Preferred {
		loc, id, ok, approved, err := f.owner(choice.Preferred)
		if err != nil {
			return choice, err
		}
		if ok {
			choice.TakenBy, choice.Reserved = loc, !approved
			if loc == "" {
				choice.TakenBy = id
			}
		}
	}
	if choice.Name == "" {
		return choice, fmt.Errorf("airlock: every name for %s is taken (%s): %w", location, strings.Join(cands, ", "), fault.ErrConflict)
	}
	return choice, nil
}

// reservedPrefix names the files that mark a review's reservation of a
// wrapper name ("reserved-" and the first 16 digits of its spec's hash).
const reservedPrefix = "reserved-"

// ReserveName claims the wrapper name of a spec under review, so that the
// name its review shows is the name an approval gives it, and a second
// pending spec with the same title is shown the next name and who holds
// this one. The reservation is released by ReleaseName when the review
// ends without an approval.
func (f *Files) ReserveName(doc *openapi3.T, location, specHash string) (NameChoice, error) {
	if !hashRE.MatchString(specHash) {
		return NameChoice{}, fmt.Errorf("airlock: spec %q: not a sha256: %w", specHash, fault.ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	choice, err := f.ClaimWrapperName(doc, location, "")
	if err != nil {
		return choice, err
	}
	mark := filepath.Join(f.WrapperDir(choice.Name), reservedPrefix+specHash[:16])
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		return choice, fmt.Errorf("airlock: reserve %s: %w", choice.Name, err)
	}
	return choice, nil
}

// ReleaseName ends the reservation of name by the review of specHash (at
// location). The name becomes free again when no approval holds it and no
// other review of the same location still reserves it.
func (f *Files) ReleaseName(name, location, specHash string) error {
	if !hashRE.MatchString(specHash) || name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("airlock: release %q for spec %q: %w", name, specHash, fault.ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dir := f.WrapperDir(name)
	if err := os.Remove(filepath.Join(dir, reservedPrefix+specHash[:16])); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("airlock: release %s: %w", name, err)
	}
	loc, _, ok, approved, err := f.owner(name)
	if err != nil || !ok || approved || loc != location {
		return err
	}
	if others, _ := filepath.Glob(filepath.Join(dir, reservedPrefix+"*")); len(others) > 0 {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, ownerFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("airlock: release %s: %w", name, err)
	}
	_ = os.Remove(dir) // only when empty
	return nil
}

// claim writes name's owner file for location unless it exists; it
// reports whether location owns name afterwards. The file appears whole
// (a link of a complete temporary file) or not at all.
func (f *Files) claim(name, location string) (bool, error) {
	dir := f.WrapperDir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("airlock: claim %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(dir, ".owner-*")
	if err != nil {
		return false, fmt.Errorf("airlock: claim %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(location); err != nil {
		tmp.Close()
		return false, fmt.Errorf("airlock: claim %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("airlock: claim %s: %w", name, err)
	}
	err = os.Link(tmp.Name(), filepath.Join(dir, ownerFile))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("airlock: claim %s: %w", name, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false, fmt.Errorf("airlock: claim %s: %w", name, err)
	}
	return string(b) == location, nil
}
