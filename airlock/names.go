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
// approval itself), and another spec gets the next free candidate.

const ownerFile = "owner"

// NameChoice is the wrapper name a spec gets.
type NameChoice struct {
	// Name is the wrapper name ("swagger_petstore_petstore_expanded").
	Name string `json:"name"`
	// Preferred is the name its title gives ("swagger_petstore").
	Preferred string `json:"preferred"`
	// TakenBy names the spec that owns Preferred when Name differs.
	TakenBy string `json:"takenBy,omitempty"`
}

// Warning says why Name is not Preferred ("" when it is).
func (c NameChoice) Warning() string {
	if c.Name == c.Preferred {
		return ""
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
// was kept) its approval id. ok is false for a free name.
func (f *Files) owner(name string) (location, approvalID string, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(f.WrapperDir(name), ownerFile))
	if err == nil {
		return string(b), "", true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", "", false, fmt.Errorf("airlock: owner of %s: %w", name, err)
	}
	a, err := f.Approval(name)
	if errors.Is(err, fault.ErrNotFound) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	return a.Location, a.ID, true, nil
}

func (f *Files) ownedBy(name, location, approvalID string) (mine bool, takenBy string, err error) {
	loc, id, ok, err := f.owner(name)
	if err != nil || !ok {
		return !ok, "", err
	}
	if loc != "" {
		return loc == location, loc, nil
	}
	return id == approvalID, id, nil
}

// WrapperName is the name the spec at location would get now, without
// claiming it (what its review shows).
func (f *Files) WrapperName(doc *openapi3.T, location, approvalID string) (NameChoice, error) {
	cands := nameCandidates(doc, location)
	choice := NameChoice{Preferred: cands[0]}
	for _, name := range cands {
		mine, takenBy, err := f.ownedBy(name, location, approvalID)
		if err != nil {
			return choice, err
		}
		if mine {
			choice.Name = name
			return choice, nil
		}
		if choice.TakenBy == "" {
			choice.TakenBy = takenBy
		}
	}
	return choice, fmt.Errorf("airlock: every name for %s is taken (%s): %w", location, strings.Join(cands, ", "), fault.ErrConflict)
}

// ClaimWrapperName reserves the spec's wrapper name for it (the first
// candidate it owns or can claim) and returns it. Claiming is atomic, so
// two approvals of different specs never get the same name.
func (f *Files) ClaimWrapperName(doc *openapi3.T, location, approvalID string) (NameChoice, error) {
	cands := nameCandidates(doc, location)
	choice := NameChoice{Preferred: cands[0]}
	for _, name := range cands {
		mine, takenBy, err := f.ownedBy(name, location, approvalID)
		if err != nil {
			return choice, err
		}
		if mine {
			ok, err := f.claim(name, location)
			if err != nil {
				return choice, err
			}
			if ok {
				choice.Name = name
				return choice, nil
			}
			_, takenBy, _ = f.ownedBy(name, location, approvalID)
		}
		if choice.TakenBy == "" {
			choice.TakenBy = takenBy
		}
	}
	return choice, fmt.Errorf("airlock: every name for %s is taken (%s): %w", location, strings.Join(cands, ", "), fault.ErrConflict)
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
