package identity_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestKeysLifecycle(t *testing.T) {
	ctx := context.Background()
	mem := identitytest.NewMem()
	keys := identity.NewKeyService(mem)
	auth := &identity.Authenticator{Keys: keys}
	admin := identity.Principal{Subject: "key:kadmin", Method: identity.MethodAPIKey, Level: "admin", Roles: []string{"vet"}, Groups: []string{"clinic", "default"}}
	// An admin of the default group only, restricted to one module.
	narrow := identity.Principal{Subject: "key:knarrow", Method: identity.MethodAPIKey, Level: "admin", Modules: []string{"currency"}}
	owner := identity.Principal{Subject: "key:kowner", Method: identity.MethodAPIKey, Level: "owner"}

	k, secret, err := keys.Create(ctx, admin, identity.NewKey{Owner: "ana", Level: "user", Roles: []string{"vet"}, Groups: []string{"clinic"}})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := mem.GetKey(ctx, k.ID)
	if strings.Contains(stored.Hash, secret) || stored.Hash != identity.HashSecret(secret) || k.CreatedBy != "key:kadmin" {
		t.Fatalf("stored key %+v: only the hash of the secret may be stored", stored)
	}
	p, err := auth.Authenticate(ctx, "Bearer "+secret)
	if err != nil || p.Subject != "key:"+k.ID || p.Level != "user" || !p.HasRole("vet") || !slices.Equal(p.Groups, []string{"clinic"}) {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}
	if list, _ := keys.List(ctx); len(list) != 1 || list[0].Hash != "" {
		t.Fatalf("List must not return hashes: %+v", list)
	}

	// Creation rules name the field.
	for _, c := range []struct {
		creator identity.Principal
		req     identity.NewKey
		want    error
		field   string
	}{
		{admin, identity.NewKey{Level: "user"}, fault.ErrInvalid, "owner"},
		{admin, identity.NewKey{Owner: "x", Level: "root"}, fault.ErrInvalid, "level"},
		{admin, identity.NewKey{Owner: "x", Level: "owner"}, fault.ErrForbidden, "level"},
		{admin, identity.NewKey{Owner: "x", Level: "user", TrustedGateway: true}, fault.ErrForbidden, "trustedGateway"},
		{admin, identity.NewKey{Owner: "x", Level: "user", ExpiresAt: time.Now().Add(-time.Hour)}, fault.ErrInvalid, "expiresAt"},
		{admin, identity.NewKey{Owner: "x\x1b[2Jfake", Level: "user"}, fault.ErrInvalid, "owner"},
		{admin, identity.NewKey{Owner: "ana\u202egnp.exe", Level: "user"}, fault.ErrInvalid, "owner"}, // a bidi override reads as another name
		{admin, identity.NewKey{Owner: "a\u200bna", Level: "user"}, fault.ErrInvalid, "owner"},        // an invisible character hides in a name
		{admin, identity.NewKey{Owner: "x", Description: "a\rb", Level: "user"}, fault.ErrInvalid, "description"},
		// Delegation: below owner, a key grants only what its creator holds.
		{admin, identity.NewKey{Owner: "x", Level: "user", Roles: []string{"trader"}}, fault.ErrForbidden, "roles"},
		{admin, identity.NewKey{Owner: "x", Level: "user", Permissions: []string{"health.read"}}, fault.ErrForbidden, "permissions"},
		{admin, identity.NewKey{Owner: "x", Level: "user", Groups: []string{"*"}}, fault.ErrForbidden, "groups"},
		{admin, identity.NewKey{Owner: "x", Level: "user", Groups: []string{"finance"}}, fault.ErrForbidden, "groups"},
		{narrow, identity.NewKey{Owner: "x", Level: "user", Groups: []string{"clinic"}}, fault.ErrForbidden, "groups"},
		{narrow, identity.NewKey{Owner: "x", Level: "user"}, fault.ErrForbidden, "modules"},
		{narrow, identity.NewKey{Owner: "x", Level: "user", Modules: []string{"currency", "text"}}, fault.ErrForbidden, "modules"},
		{admin, identity.NewKey{Owner: "x", Level: "user", Limits: graph.KeyLimits{SearchPerMinute: -1}}, fault.ErrForbidden, "limits.searchPerMinute"},
	} {
		_, _, err := keys.Create(ctx, c.creator, c.req)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Create(%+v) = %v, want %v naming %s", c.req, err, c.want, c.field)
		}
	}

	// What the creator's level carries on the shared rules, and anything for
	// an owner, may be granted.
	for _, c := range []struct {
		creator identity.Principal
		req     identity.NewKey
	}{
		{admin, identity.NewKey{Owner: "x", Level: "user", Roles: []string{"approver", "vet"}, Permissions: []string{"tools:write", "metrics:read"}, Groups: []string{"clinic"}}},
		{narrow, identity.NewKey{Owner: "x", Level: "user", Modules: []string{"currency"}}},
		{owner, identity.NewKey{Owner: "x", Level: "admin", Roles: []string{"trader"}, Permissions: []string{"health.read"}, Groups: []string{"*"}}},
	} {
		if _, _, err := keys.Create(ctx, c.creator, c.req); err != nil {
			t.Errorf("%s creating %+v: %v", c.creator.Subject, c.req, err)
		}
	}

	// Bad secrets: 401 with a reason, never echoing the secret.
	wrong := secret[:len(secret)-1] + "A"
	if wrong == secret {
		wrong = secret[:len(secret)-1] + "B"
	}
	for name, header := range map[string]string{
		"wrong secret": "Bearer " + wrong,
		"unknown id":   "Bearer tsk_k0123456789ab_" + strings.Repeat("x", 43),
		"malformed":    "Bearer tsk_nope",
		"not bearer":   "Basic " + secret,
		"empty bearer": "Bearer ",
	} {
		_, err := auth.Authenticate(ctx, header)
		if !errors.Is(err, fault.ErrUnauthenticated) {
			t.Errorf("%s: %v, want ErrUnauthenticated", name, err)
		}
		if err != nil && strings.Contains(err.Error(), secret[12:]) {
			t.Errorf("%s: the error echoes the secret", name)
		}
	}
	// An unknown key id and a wrong secret read alike: guessing ids
	// teaches nothing.
	_, errWrong := auth.Authenticate(ctx, "Bearer "+wrong)
	unknownID := "k0123456789ab"
	_, errUnknown := auth.Authenticate(ctx, "Bearer tsk_"+unknownID+"_"+strings.Repeat("x", 43))
	if errWrong == nil || errUnknown == nil ||
		strings.Replace(errUnknown.Error(), unknownID, k.ID, 1) != errWrong.Error() {
		t.Errorf("an unknown id and a wrong secret read differently:\n%v\n%v", errUnknown, errWrong)
	}

	// Expiry and revocation.
	short, shortSecret, err := keys.Create(ctx, admin, identity.NewKey{Owner: "tmp", Level: "user", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.RevokeKey(ctx, short.ID, time.Now()); err != nil { // behind the service's back: the cache decides
		t.Fatal(err)
	}
	keys.SetCacheTTL(0)
	if _, err := auth.Authenticate(ctx, "Bearer "+shortSecret); !errors.Is(err, fault.ErrUnauthenticated) || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("revoked key: %v", err)
	}
	if err := keys.Revoke(ctx, identity.Principal{}, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Authenticate(ctx, "Bearer "+secret); !errors.Is(err, fault.ErrUnauthenticated) {
		t.Errorf("revoked key still works: %v", err)
	}
	if err := keys.Revoke(ctx, identity.Principal{}, "k000000000000"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	if p, err := auth.Authenticate(ctx, ""); err != nil || p.Authenticated() {
		t.Errorf("no credential must be the anonymous guest: %+v %v", p, err)
	}
}

func TestNarrowOnlyNarrows(t *testing.T) {
	user := identity.Principal{Subject: "key:k1", Method: identity.MethodAPIKey, KeyID: "k1", Level: "user",
		Roles: []string{"vet"}, Groups: []string{"default", "clinic"}, Modules: []string{"pets"}}
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	// Claims about the user in headers are ignored from an ordinary key.
	c, err := identity.Narrow(user, h("X-User-ID", "root", "X-Permission-Level", "owner", "X-User-Roles", "admin", "X-User-Permissions", "tools:write"))
	if err != nil || c.UserID != "key:k1" || c.Level != "user" || !slices.Equal(c.Roles, []string{"vet"}) || len(c.Permissions) != 0 {
		t.Fatalf("headers widened an ordinary key: %+v %v", c, err)
	}
	// Narrowing within the key works; outside it is refused.
	if c, err := identity.Narrow(user, h("X-Tool-Groups", "clinic")); err != nil || !slices.Equal(c.Groups, []string{"clinic"}) {
		t.Fatalf("narrow groups: %+v %v", c, err)
	}
	if _, err := identity.Narrow(user, h("X-Tool-Groups", "clinic,finance")); !errors.Is(err, fault.ErrForbidden) || !strings.Contains(err.Error(), "finance") {
		t.Fatalf("groups outside the key: %v", err)
	}
	if _, err := identity.Narrow(user, h("X-Allowed-Modules", "bank")); !errors.Is(err, fault.ErrForbidden) {
		t.Fatalf("modules outside the key: %v", err)
	}
	if c, err := identity.Narrow(user, h("X-Tool-Groups", "")); err != nil || c.Groups == nil || len(c.Groups) != 0 {
		t.Fatalf("present but empty groups must mean no tools: %+v %v", c, err)
	}
	// Sessions are scoped to the caller.
	c, _ = identity.Narrow(user, h("X-Session-ID", "s1", "X-Agent-State", "booking"))
	if c.SessionID != "key:k1/s1" || c.State != "booking" {
		t.Fatalf("session/state: %+v", c)
	}
	anon, _ := identity.Narrow(identity.Anonymous(), h("X-Session-ID", "s1"))
	if anon.SessionID == c.SessionID {
		t.Fatal("an anonymous caller shares a user's session by naming it")
	}

	// A trusted gateway acts for end users within its own limits.
	gw := identity.Principal{Subject: "key:kg", Method: identity.MethodAPIKey, KeyID: "kg", Level: "admin",
		Roles: []string{"vet", "approver"}, Groups: []string{"*"}, TrustedGateway: true}
	c, err = identity.Narrow(gw, h("X-User-ID", "ana", "X-Permission-Level", "user", "X-User-Roles", "vet"))
	if err != nil || c.UserID != "gateway:kg:ana" || c.Level != "user" || !slices.Equal(c.Roles, []string{"vet"}) {
		t.Fatalf("gateway end user: %+v %v", c, err)
	}
	if c, _ := identity.Narrow(gw, h("X-User-ID", "bob")); c.Level != "guest" || len(c.Roles) != 0 {
		t.Fatalf("an end user without a level is a guest: %+v", c)
	}
	for name, hdr := range map[string]http.Header{
		"level above the gateway's": h("X-User-ID", "ana", "X-Permission-Level", "owner"),
		"role the gateway lacks":    h("X-User-ID", "ana", "X-User-Roles", "pilot"),
		"permission it lacks":       h("X-User-ID", "ana", "X-User-Permissions", "tools:write"),
	} {
		if _, err := identity.Narrow(gw, hdr); !errors.Is(err, fault.ErrForbidden) {
			t.Errorf("gateway %s: %v, want 403", name, err)
		}
	}
}

func TestRules(t *testing.T) {
	anon := identity.Anonymous()
	user := identity.Principal{Subject: "key:u", Method: identity.MethodAPIKey, Level: "user"}
	approver := identity.Principal{Subject: "key:a", Method: identity.MethodAPIKey, Level: "user", Roles: []string{"approver"}}
	writer := identity.Principal{Subject: "key:w", Method: identity.MethodAPIKey, Level: "user", Permissions: []string{"tools:write"}}
	admin := identity.Principal{Subject: "key:ad", Method: identity.MethodAPIKey, Level: "admin"}
	for _, c := range []struct {
		rule identity.Rule
		p    identity.Principal
		want error
	}{
		{identity.RulePublic, anon, nil},
		{identity.RuleAuthenticated, anon, fault.ErrUnauthenticated},
		{identity.RuleAuthenticated, user, nil},
		{identity.RuleAdmin, user, fault.ErrForbidden},
		{identity.RuleAdmin, admin, nil},
		{identity.RuleApprover, approver, nil},
		{identity.RuleApprover, writer, fault.ErrForbidden},
		{identity.RuleToolsWrite, writer, nil},
		{identity.RuleToolsWrite, approver, fault.ErrForbidden},
		{identity.RuleToolsWrite, admin, nil},
		{identity.RuleOwner, admin, fault.ErrForbidden},
	} {
		err := c.rule.Check(c.p)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s.Check(%s) = %v, want %v", c.rule.Name, c.p.Subject, err, c.want)
		}
	}
}

// TestRevokeFollowsLevels: revoking has creation's level rule; an admin
// cannot revoke an owner's key, an owner can revoke an
// admin's, and a refused revocation leaves the key working.
func TestRevokeFollowsLevels(t *testing.T) {
	ctx := context.Background()
	keys := identity.NewKeyService(identitytest.NewMem())
	auth := &identity.Authenticator{Keys: keys}
	ownerKey, ownerSecret, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "root", Level: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	adminKey, _, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "ops", Level: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	admin := identity.KeyPrincipal(adminKey)
	if err := keys.Revoke(ctx, admin, ownerKey.ID); !errors.Is(err, fault.ErrForbidden) || !strings.Contains(err.Error(), "owner") {
		t.Fatalf("an admin revoking an owner key: %v, want ErrForbidden naming the level", err)
	}
	if _, err := auth.Authenticate(ctx, "Bearer "+ownerSecret); err != nil {
		t.Fatalf("the owner key stopped working after a refused revocation: %v", err)
	}
	if err := keys.Revoke(ctx, admin, "k000000000000"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("an admin revoking an unknown key: %v, want ErrNotFound", err)
	}
	if err := keys.Revoke(ctx, identity.KeyPrincipal(ownerKey), adminKey.ID); err != nil {
		t.Fatalf("an owner revoking an admin key: %v", err)
	}
}

// TestActingIsTheNarrowedPrincipal: a trusted gateway acting for a guest
// is authorized as a guest; any other principal acts
// as itself.
func TestActingIsTheNarrowedPrincipal(t *testing.T) {
	gw := identity.Principal{Subject: "key:kgw", KeyID: "kgw", Method: identity.MethodAPIKey, Level: "owner",
		Permissions: []string{"tools:write"}, TrustedGateway: true}
	h := http.Header{}
	h.Set(identity.HeaderUserID, "ana")
	h.Set(identity.HeaderLevel, "guest")
	c, err := identity.Narrow(gw, h)
	if err != nil {
		t.Fatal(err)
	}
	acting := gw.Acting(c)
	if acting.Level != "guest" || len(acting.Permissions) != 0 || acting.Subject != gw.Subject {
		t.Fatalf("acting = %+v", acting)
	}
	for _, r := range []identity.Rule{identity.RuleAdmin, identity.RuleToolsWrite, identity.RuleOwner} {
		if err := r.Check(acting); !errors.Is(err, fault.ErrForbidden) {
			t.Errorf("rule %s for a gateway narrowed to guest: %v, want ErrForbidden", r.Name, err)
		}
	}
	if err := identity.RuleAuthenticated.Check(acting); err != nil {
		t.Errorf("authenticated: %v", err)
	}
	// Without X-User-ID the gateway acts as itself, and the level it sends
	// still narrows it.
	self := http.Header{}
	self.Set(identity.HeaderLevel, "guest")
	sc, err := identity.Narrow(gw, self)
	if err != nil {
		t.Fatal(err)
	}
	if a := gw.Acting(sc); a.Level != "guest" || sc.UserID != gw.Subject || identity.RuleAdmin.Check(a) == nil {
		t.Errorf("a gateway narrowed to guest as itself: acting %+v, caller %+v", a, sc)
	}
	if a := gw.Acting(mustNarrow(t, gw, http.Header{})); a.Level != "owner" || !a.HasPermission("tools:write") {
		t.Errorf("a gateway without headers lost its own allowances: %+v", a)
	}
	plain := identity.Principal{Subject: "key:k1", Method: identity.MethodAPIKey, Level: "admin", Roles: []string{"approver"}}
	pc, err := identity.Narrow(plain, h) // not a gateway: X-User-* are ignored
	if err != nil {
		t.Fatal(err)
	}
	if a := plain.Acting(pc); a.Level != "admin" || !a.HasRole("approver") {
		t.Errorf("a non-gateway principal changed by acting: %+v", a)
	}
}

func mustNarrow(t *testing.T, p identity.Principal, h http.Header) access.Caller {
	t.Helper()
	c, err := identity.Narrow(p, h)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRevocationAcrossReplicas: two key services over one store, as two
// API replicas are. A key one revokes is refused by the other at its next
// revocation check (DefaultRevocationCheck in production), although the
// other holds the key's record in its verification cache.
func TestRevocationAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	mem := identitytest.NewMem()
	a, b := identity.NewKeyService(mem), identity.NewKeyService(mem)
	_, secret, err := a.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "ana", Level: "user"})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := identity.ParseSecret(secret)
	b.SetRevocationCheck(time.Hour) // first: show that b's cache would keep the key
	if _, err := b.Verify(ctx, secret); err != nil {
		t.Fatalf("replica b before the revocation: %v", err)
	}
	if err := a.Revoke(ctx, identity.Principal{}, k); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(ctx, secret); !errors.Is(err, fault.ErrUnauthenticated) {
		t.Fatalf("replica a, which revoked: err = %v, want ErrUnauthenticated", err)
	}
	if _, err := b.Verify(ctx, secret); err != nil {
		t.Fatalf("replica b before its next check still has the key cached; err = %v", err)
	}
	b.SetRevocationCheck(0) // the next check is due
	if _, err := b.Verify(ctx, secret); !errors.Is(err, fault.ErrUnauthenticated) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("replica b after its check: err = %v, want the revocation", err)
	}
}
