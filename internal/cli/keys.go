package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/toolsmith/toolsmith/api/admin"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/datadir"
)

// AdminKeyFile is the first-start owner key's file inside the data dir.
const AdminKeyFile = "admin.key"

// ensureOwnerKey creates an owner key when the store holds no key at all
// (first start) and writes its secret to <data-dir>/admin.key with mode
// 0600, saying where. Later starts leave keys alone.
func ensureOwnerKey(ctx context.Context, e *env, sys *system) error {
	keys, err := sys.keys.List(ctx)
	if err != nil {
		return fmt.Errorf("check for a first start: %w", err)
	}
	path := filepath.Join(sys.cfg.DataDir, AdminKeyFile)
	if len(keys) > 0 {
		if _, err := os.Stat(path); err == nil {
			fmt.Fprintf(e.stderr, "owner key: %s (send it as Authorization: Bearer <key>)\n", path)
		}
		return nil
	}
	if err := os.MkdirAll(sys.cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	k, secret, err := sys.keys.Create(ctx, identity.Principal{}, identity.NewKey{
		Owner: "owner", Level: "owner", Groups: []string{"*"}, Description: "first-start owner key of " + sys.cfg.DataDir,
	})
	if err != nil {
		return fmt.Errorf("create the first-start owner key: %w", err)
	}
	won, err := claimSecretFile(ctx, sys.keys, path, secret)
	if err != nil || !won {
		// Without the file nobody could use the key: take it back.
		_ = sys.keys.Revoke(ctx, identity.Principal{}, k.ID)
	}
	if err != nil {
		return err
	}
	if !won {
		// Another replica started at the same moment and its key is the
		// one in the file.
		fmt.Fprintf(e.stderr, "owner key: %s (created by another process starting beside this one)\n", path)
		return nil
	}
	sys.log.Info("first-start owner key created", "key", k.ID, "file", path)
	fmt.Fprintf(e.stderr, "first start: created owner key %s and wrote it to %s (mode 0600).\n"+
		"  Use it as: curl -H \"Authorization: Bearer $(cat %s)\" …\n", k.ID, path, path)
	return nil
}

// claimSecretFile writes the first-start owner key's secret to path
// unless another process starting at the same moment on the same data dir
// (an API replica) got there first with a key that verifies: then it
// writes nothing and reports false, and the caller revokes its own key,
// so that one owner key exists and the file holds it. A file left from an
// older store (its key unknown here) is replaced.
func claimSecretFile(ctx context.Context, keys *identity.KeyService, path, secret string) (bool, error) {
	err := writeSecretFileWith(path, secret, os.Link)
	if !errors.Is(err, fs.ErrExist) {
		return err == nil, err
	}
	if other, rerr := readKeyFile(path); rerr == nil {
		if _, verr := keys.Verify(ctx, other); verr == nil {
			return false, nil
		}
	}
	return true, writeSecretFile(path, secret)
}

// writeSecretFile writes a secret readable by its owner only, atomically.
func writeSecretFile(path, secret string) error {
	return writeSecretFileWith(path, secret, os.Rename)
}

// writeSecretFileWith writes the secret to a temporary file and puts it
// in place with place: os.Rename replaces path, os.Link fails with
// fs.ErrExist when path exists.
func writeSecretFileWith(path, secret string, place func(oldpath, newpath string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".admin-key-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.WriteString(secret + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := place(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readKeyFile reads a key secret from a file (one line).
func readKeyFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read key file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// keyClient is what keys create|list|revoke run against: the store in the
// data dir, or a running server's admin routes.
type keyClient interface {
	create(ctx context.Context, req identity.NewKey) (graph.APIKey, string, error)
	list(ctx context.Context) ([]graph.APIKey, error)
	revoke(ctx context.Context, id string) error
	close()
}

// keysFlags are the flags every keys subcommand shares.
type keysFlags struct {
	url, keyFile string
	asJSON       bool
}

func (k *keysFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&k.url, "url", "", "a running Toolsmith's base URL (e.g. http://127.0.0.1:8080); empty: open the store in --data-dir directly [env "+config.EnvName("url")+"]")
	fs.StringVar(&k.keyFile, "key-file", "", "with --url: file holding an admin key (default "+config.EnvName("api-key")+", then <data-dir>/admin.key)")
	fs.BoolVar(&k.asJSON, "json", false, "print JSON instead of a table")
}

// keysCommand builds a keys subcommand: the store flags, the shared keys
// flags, and run against the key client they select.
func keysCommand(e *env, c *cobra.Command, run func(ctx context.Context, kc keyClient, kf keysFlags, args []string) error) *cobra.Command {
	b := config.Bind(c.Flags(), config.FlagsServe)
	kf := &keysFlags{}
	kf.register(c.Flags())
	c.RunE = func(c *cobra.Command, args []string) error {
		cfg, err := b.Load(e.lookupEnv)
		if err != nil {
			return err
		}
		ctx := c.Context()
		kc, err := openKeyClient(ctx, e, cfg, *kf)
		if err != nil {
			return err
		}
		defer kc.close()
		return run(ctx, kc, *kf, args)
	}
	return c
}

// newKeysCreateCommand is `toolsmith keys create`: it creates a key and
// prints its secret alone on the last line of stdout.
func newKeysCreateCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "create", Args: noArgs}
	var req identity.NewKey
	var expiresIn time.Duration
	fs := c.Flags()
	fs.StringVar(&req.Owner, "owner", "", "whom the key is for (required)")
	fs.StringVar(&req.Level, "level", "user", "guest, user, admin or owner")
	fs.StringVar(&req.Description, "description", "", "free text shown in listings")
	fs.StringSliceVar(&req.Roles, "role", nil, "a role (repeatable or comma-separated), e.g. approver")
	fs.StringSliceVar(&req.Permissions, "permission", nil, "a permission (repeatable or comma-separated), e.g. tools:write")
	fs.StringSliceVar(&req.Groups, "group", nil, "an allowed tool group (repeatable; default: the default group; * for all)")
	fs.StringSliceVar(&req.Modules, "module", nil, "an allowed module (repeatable; default: any)")
	fs.BoolVar(&req.TrustedGateway, "trusted-gateway", false, "the key may act for end users with X-User-* headers (owner only)")
	fs.DurationVar(&expiresIn, "expires-in", 0, "the key expires after this long (e.g. 720h; 0: never)")
	fs.IntVar(&req.Limits.SearchPerMinute, "search-per-minute", 0, "this key's search rate limit (0: server default, <0: none)")
	fs.IntVar(&req.Limits.ExecutePerMinute, "execute-per-minute", 0, "this key's execution rate limit (0: server default, <0: none)")
	fs.IntVar(&req.Limits.VerbsPerMinute, "verbs-per-minute", 0, "this key's verb rate limit (0: server default, <0: none)")
	return keysCommand(e, c, func(ctx context.Context, kc keyClient, kf keysFlags, _ []string) error {
		if expiresIn < 0 {
			return fmt.Errorf("--expires-in must not be negative: %w", config.ErrInvalid)
		}
		if expiresIn > 0 {
			req.ExpiresAt = time.Now().Add(expiresIn).UTC()
		}
		k, secret, err := kc.create(ctx, req)
		if err != nil {
			return err
		}
		if kf.asJSON {
			out, _ := json.Marshal(admin.CreatedKey{Key: k, Secret: secret})
			fmt.Fprintln(e.stdout, string(out))
		} else {
			fmt.Fprintf(e.stdout, "created key %s for %s (level %s); the secret is shown once, below:\n", k.ID, k.Owner, k.Level)
		}
		fmt.Fprintln(e.stdout, secret)
		return nil
	})
}

// newKeysListCommand is `toolsmith keys list` (never secrets or hashes).
func newKeysListCommand(e *env) *cobra.Command {
	return keysCommand(e, &cobra.Command{Use: "list", Args: noArgs}, func(ctx context.Context, kc keyClient, kf keysFlags, _ []string) error {
		keys, err := kc.list(ctx)
		if err != nil {
			return err
		}
		if kf.asJSON {
			out, _ := json.Marshal(keys)
			fmt.Fprintln(e.stdout, string(out))
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tOWNER\tLEVEL\tROLES\tPERMISSIONS\tGROUPS\tSTATE\tCREATED")
		for _, k := range keys {
			state := "active"
			switch {
			case !k.RevokedAt.IsZero():
				state = "revoked"
			case !k.ExpiresAt.IsZero() && time.Now().After(k.ExpiresAt):
				state = "expired"
			}
			groups := "default"
			if k.Groups != nil {
				groups = strings.Join(k.Groups, ",")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Owner, k.Level, dash(strings.Join(k.Roles, ",")),
				dash(strings.Join(k.Permissions, ",")), dash(groups), state, k.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

// newKeysRevokeCommand is `toolsmith keys revoke KEY_ID`.
func newKeysRevokeCommand(e *env) *cobra.Command {
	return keysCommand(e, &cobra.Command{Use: "revoke KEY_ID", Args: exactArgs(1, "KEY_ID")}, func(ctx context.Context, kc keyClient, _ keysFlags, args []string) error {
		if err := kc.revoke(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "revoked %s\n", args[0])
		return nil
	})
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func openKeyClient(ctx context.Context, e *env, cfg config.Config, kf keysFlags) (keyClient, error) {
	if kf.url == "" {
		if v, ok := e.lookupEnv(config.EnvName("url")); ok {
			kf.url = v
		}
	}
	if kf.url != "" {
		if err := checkBaseURL(kf.url); err != nil {
			return nil, err
		}
		secret := ""
		switch {
		case kf.keyFile != "":
			s, err := readKeyFile(kf.keyFile)
			if err != nil {
				return nil, fmt.Errorf("--key-file: %w", err)
			}
			secret = s
		default:
			if v, ok := e.lookupEnv(config.EnvName("api-key")); ok && v != "" {
				secret = v
			} else if s, err := readKeyFile(filepath.Join(cfg.DataDir, AdminKeyFile)); err == nil {
				secret = s
			}
		}
		if secret == "" {
			return nil, fmt.Errorf("--url needs an admin key: --key-file, %s or %s: %w",
				config.EnvName("api-key"), filepath.Join(cfg.DataDir, AdminKeyFile), config.ErrInvalid)
		}
		return &httpKeys{base: strings.TrimRight(kf.url, "/"), secret: secret, c: &http.Client{Timeout: 30 * time.Second}}, nil
	}
	lock, err := lockStore(cfg, "toolsmith keys")
	if err != nil {
		return nil, fmt.Errorf("%w (or manage keys through the running server with --url)", err)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	return &storeKeys{svc: identity.NewKeyService(st), st: st, lock: lock}, nil
}

// storeKeys manages keys in the store directly (an operator on the host).
type storeKeys struct {
	svc *identity.KeyService
	st  graph.Store
	// lock holds the data dir while the SQLite store is open (nil with neo4j).
	lock *datadir.Lock
}

func (s *storeKeys) create(ctx context.Context, req identity.NewKey) (graph.APIKey, string, error) {
	// The operator on the host is trusted as the owner: it holds the store.
	return s.svc.Create(ctx, identity.Principal{}, req)
}
func (s *storeKeys) list(ctx context.Context) ([]graph.APIKey, error) { return s.svc.List(ctx) }
func (s *storeKeys) revoke(ctx context.Context, id string) error {
	return s.svc.Revoke(ctx, identity.Principal{}, id) // the operator on the host, as for create
}
func (s *storeKeys) close() {
	_ = s.st.Close()
	_ = s.lock.Release()
}

// httpKeys manages keys through a running server's admin routes.
type httpKeys struct {
	base, secret string
	c            *http.Client
}

func (h *httpKeys) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return fmt.Errorf("--url: %w: %w", config.ErrInvalid, err)
	}
	req.Header.Set("Authorization", "Bearer "+h.secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.c.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d with an unreadable body: %w", method, path, resp.StatusCode, err)
	}
	if env.Error != nil {
		return fmt.Errorf("%s %s: HTTP %d %s: %s", method, path, resp.StatusCode, env.Error.Code, env.Error.Message)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	if out != nil {
		return json.Unmarshal(env.Data, out)
	}
	return nil
}

func (h *httpKeys) create(ctx context.Context, req identity.NewKey) (graph.APIKey, string, error) {
	var out admin.CreatedKey
	err := h.do(ctx, http.MethodPost, "/api/v1/admin/keys", req, &out)
	return out.Key, out.Secret, err
}

func (h *httpKeys) list(ctx context.Context) ([]graph.APIKey, error) {
	var out struct {
		Keys []graph.APIKey `json:"keys"`
	}
	err := h.do(ctx, http.MethodGet, "/api/v1/admin/keys", nil, &out)
	return out.Keys, err
}

func (h *httpKeys) revoke(ctx context.Context, id string) error {
	return h.do(ctx, http.MethodDelete, "/api/v1/admin/keys/"+id, nil, nil)
}

func (h *httpKeys) close() {}

// checkBaseURL refuses a --url that is no http(s) URL with a host: a bare
// "127.0.0.1:8080" would otherwise fail deep in the HTTP client ("first
// path segment in URL cannot contain colon").
func checkBaseURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url: must be an http(s) URL with a host, like http://127.0.0.1:8080, got %q: %w", v, config.ErrInvalid)
	}
	return nil
}
