//go:build unix

package airlock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO named as a source (or found in a source folder) is refused at
// once: opening one for reading would wait for a writer forever.
func TestFetcherRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pets.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	f := &Fetcher{}
	done := make(chan error, 1)
	go func() {
		_, _, err := f.Scan(context.Background(), Source{Type: SourceOpenAPI, Location: fifo})
		done <- err
	}()
	if err := <-done; !errors.Is(err, ErrNotRegular) {
		t.Fatalf("openapi source on a FIFO: %v", err)
	}
	specs, errs, err := f.Scan(context.Background(), Source{Type: SourceDirectory, Location: dir})
	if err != nil || len(specs) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrNotRegular) {
		t.Fatalf("folder holding a FIFO: specs=%d errs=%v err=%v", len(specs), errs, err)
	}
	if _, err := os.Stat(fifo); err != nil {
		t.Fatal(err)
	}
}
