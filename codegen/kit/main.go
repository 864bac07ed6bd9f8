package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// Request is what Toolsmith writes on a wrapper's stdin.
type Request struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	// TimeoutMs bounds the call (default 30 000).
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// Credential names how to authenticate; the secret is read from the
	// environment variable Env of the wrapper process.
	Credential *CredentialRef `json:"credential,omitempty"`
}

// CredentialRef points at a secret in the wrapper's environment.
type CredentialRef struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	Env  string `json:"env"`
}

// Description is what `wrapper describe` prints.
type Description struct {
	BaseURL string     `json:"baseUrl"`
	Tools   []ToolDesc `json:"tools"`
}

// ToolDesc describes one tool of a wrapper.
type ToolDesc struct {
	Tool
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Main runs a wrapper program. args are os.Args[1:]: "describe" prints the
// tools and their input schemas; "call" (the default) reads one Request from
// stdin and prints one Result. The approved base URL is fixed at generation
// time: nothing on stdin can change the host. It returns the exit code: 0
// when a Result was printed (whether or not the call succeeded), 2 on a
// usage or protocol error.
func Main(spec []byte, tools []Tool, baseURL string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "call"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "describe":
		w, err := New(spec, tools, Options{BaseURL: baseURL})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		d := Description{BaseURL: baseURL}
		names := make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, t.Name)
		}
		sort.Strings(names)
		for _, n := range names {
			s, _ := w.InputSchema(n)
			b, _ := json.Marshal(s)
			d.Tools = append(d.Tools, ToolDesc{Tool: w.tools[n], InputSchema: b})
		}
		_, _ = stdout.Write(MarshalIndent(d))
		return 0
	case "call":
		var req Request
		dec := json.NewDecoder(io.LimitReader(stdin, 16<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			fmt.Fprintf(stderr, "wrapper: reading the request from stdin: %v\n", err)
			return 2
		}
		opts := Options{BaseURL: baseURL, Timeout: time.Duration(req.TimeoutMs) * time.Millisecond}
		if req.Credential != nil {
			opts.Credential = &Credential{Kind: req.Credential.Kind, Name: req.Credential.Name, Value: os.Getenv(req.Credential.Env)}
		}
		w, err := New(spec, tools, opts)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		res := w.Call(context.Background(), req.Tool, req.Arguments)
		b, _ := json.Marshal(res)
		_, _ = stdout.Write(append(b, '\n'))
		return 0
	default:
		fmt.Fprintf(stderr, "usage: wrapper [describe|call] (call reads a JSON request on stdin)\n")
		return 2
	}
}
