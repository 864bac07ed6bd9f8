package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
)

// TestClaimSecretFile: of two API replicas starting at once on one data
// dir, the first to write the owner key file wins and the other leaves it
// alone (its key valid); a file left from an older store (its key unknown
// here) is replaced.
func TestClaimSecretFile(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys := identity.NewKeyService(st)
	mint := func() string {
		_, secret, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "owner", Level: "owner", Groups: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	path := filepath.Join(t.TempDir(), AdminKeyFile)
	first, second := mint(), mint()
	if won, err := claimSecretFile(ctx, keys, path, first); err != nil || !won || read(path) != first {
		t.Fatalf("first claim: won %v, %v; file %q", won, err, read(path))
	}
	if won, err := claimSecretFile(ctx, keys, path, second); err != nil || won || read(path) != first {
		t.Fatalf("second claim beside a valid key: won %v, %v; file %q, want the first's", won, err, read(path))
	}
	if err := os.WriteFile(path, []byte("ts_stale_secret_of_another_store\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if won, err := claimSecretFile(ctx, keys, path, second); err != nil || !won || read(path) != second {
		t.Fatalf("claim over a stale file: won %v, %v; file %q", won, err, read(path))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}
