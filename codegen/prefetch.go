package codegen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"time"
)

// prefetchSpec is a small API that uses what every wrapper's kit uses
// (path, query and body parameters, a JSON response), so building its
// wrapper pulls in every module a generated wrapper needs.
const prefetchSpec = `{
  "openapi": "3.0.3",
  "info": {"title": "Prefetch", "version": "1.0.0"},
  "servers": [{"url": "https://prefetch.invalid/v1"}],
  "paths": {
    "/items/{id}": {
      "get": {
        "operationId": "getItem",
        "parameters": [
          {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "verbose", "in": "query", "schema": {"type": "boolean"}}
        ],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": {"id": {"type": "string"}}}}}}}
      },
      "put": {
        "operationId": "putItem",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
        "responses": {"200": {"description": "ok"}}
      }
    }
  }
}`

// Prefetch fills the Go module cache with every module a generated wrapper
// needs, so that approvals build wrappers offline later (Verify runs the go
// command with GOPROXY=off). It downloads (with the go command's usual
// proxy settings) kin-openapi's module file at the version this binary was
// built with, generates a wrapper for a built-in sample API, builds it and
// its test online, then proves the cache is complete with an offline Verify.
// Progress goes to progress. A worker image runs it once at build time
// (`toolsmith airlock prefetch`).
func Prefetch(ctx context.Context, g *Generator, goCmd string, progress io.Writer) error {
	if goCmd == "" {
		goCmd = "go"
	}
	kin := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == KinOpenAPI {
				kin = d.Version
				if d.Replace != nil {
					kin = d.Replace.Version
				}
			}
		}
	}
	if kin != "" {
		fmt.Fprintf(progress, "prefetch: %s@%s\n", KinOpenAPI, kin)
		if out, err := runGo(ctx, goCmd, os.TempDir(), nil, "mod", "download", KinOpenAPI+"@"+kin); err != nil {
			return fmt.Errorf("codegen: prefetch: go mod download %s@%s: %w: %s", KinOpenAPI, kin, err, firstLines(out, 6))
		}
	}
	reqs, err := BuildRequires(ctx, goCmd)
	if err != nil {
		return fmt.Errorf("codegen: prefetch: %w", err)
	}
	n, err := Normalise(ctx, []byte(prefetchSpec))
	if err != nil {
		return fmt.Errorf("codegen: prefetch: sample spec: %w", err)
	}
	w, err := g.Generate(n, Options{Name: "prefetch", BaseURL: "https://prefetch.invalid/v1", Requires: reqs})
	if err != nil {
		return fmt.Errorf("codegen: prefetch: generate: %w", err)
	}
	dir, err := os.MkdirTemp("", "toolsmith-prefetch-")
	if err != nil {
		return fmt.Errorf("codegen: prefetch: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := WriteFiles(dir, w.Files); err != nil {
		return err
	}
	online := []string{"GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0"}
	for _, args := range [][]string{{"mod", "download", "all"}, {"build", "-o", os.DevNull, "."}, {"test", "-c", "-o", os.DevNull, "."}} {
		fmt.Fprintf(progress, "prefetch: go %v\n", args)
		if out, err := runGo(ctx, goCmd, dir, online, args...); err != nil {
			return fmt.Errorf("codegen: prefetch: go %v: %w: %s", args, err, firstLines(out, 8))
		}
	}
	fmt.Fprintln(progress, "prefetch: checking that a wrapper now builds and passes its test offline")
	v, err := Verify(ctx, w, VerifyOptions{Go: goCmd, Timeout: 4 * time.Minute})
	if v != nil {
		defer os.RemoveAll(v.Dir)
	}
	if err != nil {
		return fmt.Errorf("codegen: prefetch: offline build still fails: %w", err)
	}
	if !v.Passed {
		return errors.New("codegen: prefetch: the sample wrapper's test failed offline:\n" + v.Output)
	}
	return nil
}

func runGo(ctx context.Context, goCmd, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}
