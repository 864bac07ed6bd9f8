package identity_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// fuzzPrincipals are the credentials FuzzNarrow narrows: TestNarrowOnlyNarrows'
// ordinary key and trusted gateway, a key allowed every group, and the
// anonymous guest.
var fuzzPrincipals = []identity.Principal{
	{Subject: "key:k1", Method: identity.MethodAPIKey, KeyID: "k1", Level: "user",
		Roles: []string{"vet"}, Groups: []string{"default", "clinic"}, Modules: []string{"pets"}},
	{Subject: "key:kg", Method: identity.MethodAPIKey, KeyID: "kg", Level: "admin",
		Roles: []string{"vet", "approver"}, Permissions: []string{"tools:read"}, Groups: []string{"*"}, TrustedGateway: true},
	{Subject: "key:ka", Method: identity.MethodAPIKey, KeyID: "ka", Level: "owner", Groups: []string{"*"}},
	identity.Anonymous(),
}

// FuzzNarrow parses arbitrary request headers (groups, modules, state,
// session, and a gateway's end-user headers) for each principal. Seeds are
// in testdata/fuzz/FuzzNarrow. Properties:
//   - an error is fault.ErrForbidden or fault.ErrMalformed and names the header;
//   - headers only narrow: groups, modules, level, roles and permissions stay
//     within the principal's, and only a trusted gateway changes the user;
//   - parsed lists hold trimmed, non-empty values; state and session id are
//     trimmed and bounded, and the session id is scoped to the user;
//   - narrowing again with the same headers gives the same caller.
func FuzzNarrow(f *testing.F) {
	f.Add(uint8(0), "clinic", "", "pets", "booking", "s1", "", "", "", "")
	f.Add(uint8(0), "clinic, finance", "default", "bank", "", "", "root", "owner", "admin", "tools:write")
	f.Add(uint8(1), "*", "", "", " state ", "sess", "ana", "user", "vet", "")
	f.Add(uint8(1), "", "", "", "", "", "ana", "OWNER", "pilot", "tools:read")
	f.Add(uint8(2), ",,", " , ", "", "", "", "", "", "", "")
	f.Add(uint8(3), "default", "", "", strings.Repeat("s", 129), strings.Repeat("x", 257), "", "", "", "")
	f.Fuzz(func(t *testing.T, who uint8, groups, groups2, modules, state, session, user, level, roles, perms string) {
		p := fuzzPrincipals[int(who)%len(fuzzPrincipals)]
		h := http.Header{}
		set := func(name string, vals ...string) {
			for _, v := range vals {
				if v != "" {
					h.Add(name, v)
				}
			}
		}
		set(identity.HeaderGroups, groups, groups2)
		set(identity.HeaderAllowedModules, modules)
		set(identity.HeaderState, state)
		set(identity.HeaderSessionID, session)
		set(identity.HeaderUserID, user)
		set(identity.HeaderLevel, level)
		set(identity.HeaderRoles, roles)
		set(identity.HeaderPermissions, perms)

		c, err := identity.Narrow(p, h)
		if err != nil {
			if !errors.Is(err, fault.ErrForbidden) && !errors.Is(err, fault.ErrMalformed) {
				t.Fatalf("Narrow: %v is neither forbidden nor malformed", err)
			}
			if !strings.Contains(err.Error(), "X-") {
				t.Fatalf("Narrow: %v names no header", err)
			}
			return
		}
		allowed := p.Caller()
		if !slices.Contains(allowed.EffectiveGroups(), access.Wildcard) {
			within(t, "groups", c.EffectiveGroups(), allowed.EffectiveGroups())
		}
		if allowed.AllowedModules != nil {
			if c.AllowedModules == nil {
				t.Fatalf("modules widened from %q to any", allowed.AllowedModules)
			}
			within(t, "modules", c.AllowedModules, allowed.AllowedModules)
		}
		if access.LevelRank(c.Level) > access.LevelRank(p.Level) {
			t.Fatalf("level widened from %q to %q", p.Level, c.Level)
		}
		within(t, "roles", c.Roles, p.Roles)
		within(t, "permissions", c.Permissions, p.Permissions)
		if !p.TrustedGateway && c.UserID != p.Subject {
			t.Fatalf("user changed from %q to %q without a trusted gateway", p.Subject, c.UserID)
		}
		for _, list := range [][]string{c.Groups, c.AllowedModules, c.Roles, c.Permissions} {
			for _, v := range list {
				if v == "" || v != strings.TrimSpace(v) || strings.Contains(v, ",") {
					t.Fatalf("list value %q is not one trimmed, non-empty item", v)
				}
			}
		}
		if c.State != strings.TrimSpace(c.State) || len(c.State) > 128 {
			t.Fatalf("state %q is not trimmed and bounded", c.State)
		}
		if c.SessionID != "" && !strings.HasPrefix(c.SessionID, identity.SessionKey(c.UserID, "x")[:len(identity.SessionKey(c.UserID, "x"))-1]) {
			t.Fatalf("session %q is not scoped to user %q", c.SessionID, c.UserID)
		}
		again, err := identity.Narrow(p, h)
		if err != nil || again.Hash() != c.Hash() || again.SessionID != c.SessionID || again.UserID != c.UserID {
			t.Fatalf("narrowing twice differs: %+v then %+v (%v)", c, again, err)
		}
	})
}

// within asserts that every value of got is one of allowed.
func within(t *testing.T, what string, got, allowed []string) {
	t.Helper()
	for _, v := range got {
		if !slices.Contains(allowed, v) {
			t.Fatalf("%s widened: %q is not among %q", what, v, allowed)
		}
	}
}
