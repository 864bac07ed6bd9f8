package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// SecretPrefix starts every API key secret: tsk_<key id>_<43 random characters>.
const SecretPrefix = "tsk_"

// DefaultKeyCacheTTL bounds how long a verified key record is reused
// before the store is read again.
const DefaultKeyCacheTTL = 30 * time.Second

// DefaultRevocationCheck is how often a KeyService asks the store whether
// any key was revoked (graph.Keys.RevokedKeys, one count); when the count
// changed it drops every cached record. So a key revoked through any
// replica is refused by every other within this interval plus one store
// round trip: at most about 1 s, well inside the stated 2 s bound.
// Revocations made through this process take effect at once.
const DefaultRevocationCheck = time.Second

var (
	keyIDRe   = regexp.MustCompile(`^k[0-9a-f]{12}$`)
	nameRe    = regexp.MustCompile(`^[A-Za-z0-9_.:\-]+$`)
	maxListed = 64
)

// NewKey is what creating a key takes. Lists follow graph.APIKey.
type NewKey struct {
	Owner          string          `json:"owner"`
	Description    string          `json:"description,omitempty"`
	Level          string          `json:"level"`
	Roles          []string        `json:"roles,omitempty"`
	Permissions    []string        `json:"permissions,omitempty"`
	Groups         []string        `json:"groups,omitempty"`
	Modules        []string        `json:"modules,omitempty"`
	TrustedGateway bool            `json:"trustedGateway,omitempty"`
	Limits         graph.KeyLimits `json:"limits,omitempty"`
	// ExpiresAt, when set, is when the key stops working.
	ExpiresAt time.Time `json:"expiresAt,omitempty"`
}

// Validate checks a key request; every problem names its field.
func (k NewKey) Validate() error {
	v := &fault.ValidationError{}
	if strings.TrimSpace(k.Owner) == "" {
		v.Add("owner", "is required: say whom the key is for")
	} else if len(k.Owner) > 200 {
		v.Add("owner", "must be at most 200 characters")
	} else if !printable(k.Owner) {
		v.Add("owner", "must be printable UTF-8 text without control, bidirectional or invisible characters (it is shown in terminals and logs), got %q", k.Owner)
	}
	if len(k.Description) > 1000 {
		v.Add("description", "must be at most 1000 characters")
	} else if !printable(k.Description) {
		v.Add("description", "must be printable UTF-8 text without control, bidirectional or invisible characters, got %q", k.Description)
	}
	if !slices.Contains(access.Levels, k.Level) {
		v.Add("level", "must be one of %s, got %q", strings.Join(access.Levels, ", "), k.Level)
	}
	for field, list := range map[string][]string{"roles": k.Roles, "permissions": k.Permissions, "groups": k.Groups, "modules": k.Modules} {
		if len(list) > maxListed {
			v.Add(field, "must have at most %d entries", maxListed)
		}
		for i, s := range list {
			if !(nameRe.MatchString(s) || (field == "groups" && s == access.Wildcard)) || len(s) > 100 {
				v.Add(fmt.Sprintf("%s[%d]", field, i), "must be 1-100 characters of letters, digits, _ . : -, got %q", s)
			}
		}
	}
	if k.Limits.SearchPerMinute > 1_000_000 || k.Limits.ExecutePerMinute > 1_000_000 || k.Limits.VerbsPerMinute > 1_000_000 {
		v.Add("limits", "must be at most 1000000 per minute")
	}
	if err := v.Err(); err != nil {
		// Sort for stable messages: the map above iterates randomly.
		slices.SortFunc(v.Fields, func(a, b fault.FieldError) int { return strings.Compare(a.Path, b.Path) })
		return v
	}
	return nil
}

// KeyService creates, lists, revokes and verifies API keys over a
// graph.Keys store, caching verified records for DefaultKeyCacheTTL and
// dropping them when the store's count of revoked keys changes (checked
// every DefaultRevocationCheck), so replicas over one store agree on
// revocations within that bound.
type KeyService struct {
	store graph.Keys
	now   func() time.Time
	ttl   time.Duration
	poll  time.Duration

	checkedAt atomic.Int64 // Unix ns when the revoked count was last asked for

	mu      sync.RWMutex
	cache   map[string]cachedKey
	revoked int // the last count seen; -1 before the first
}

type cachedKey struct {
	key graph.APIKey
	at  time.Time
}

// NewKeyService returns a key service over store.
func NewKeyService(store graph.Keys) *KeyService {
	if store == nil {
		panic("identity: nil key store")
	}
	return &KeyService{store: store, now: time.Now, ttl: DefaultKeyCacheTTL, poll: DefaultRevocationCheck,
		cache: map[string]cachedKey{}, revoked: -1}
}

// SetCacheTTL changes how long verified keys are reused (0 verifies every
// request against the store). Call it before serving.
func (s *KeyService) SetCacheTTL(ttl time.Duration) { s.ttl = ttl }

// SetRevocationCheck changes how often the store's count of revoked keys
// is polled (0: before every cached use). Call it before serving.
func (s *KeyService) SetRevocationCheck(every time.Duration) { s.poll = every }

// Create makes a key for req on behalf of creator and returns the record and
// the secret, which is shown this once and never stored. A creator may not
// make a key above its own level, nor a trusted gateway unless it is an
// owner. creator is the zero Principal only for the first-start owner key.
func (s *KeyService) Create(ctx context.Context, creator Principal, req NewKey) (graph.APIKey, string, error) {
	req.Level = strings.ToLower(strings.TrimSpace(req.Level))
	if err := req.Validate(); err != nil {
		return graph.APIKey{}, "", err
	}
	now := s.now().UTC()
	if !req.ExpiresAt.IsZero() && !req.ExpiresAt.After(now) {
		return graph.APIKey{}, "", fault.Invalid("expiresAt", "must be in the future, got %s", req.ExpiresAt.Format(time.RFC3339))
	}
	if creator.Authenticated() {
		if err := MayManage(creator, req.Level, "create"); err != nil {
			return graph.APIKey{}, "", err
		}
		if req.TrustedGateway && !creator.AtLeast("owner") {
			return graph.APIKey{}, "", fmt.Errorf("trustedGateway: only an owner may create a trusted gateway key: %w", fault.ErrForbidden)
		}
		if err := mayGrant(creator, req); err != nil {
			return graph.APIKey{}, "", err
		}
	}
	id, secret, err := newSecret()
	if err != nil {
		return graph.APIKey{}, "", err
	}
	k := graph.APIKey{
		ID: id, Hash: HashSecret(secret), Owner: strings.TrimSpace(req.Owner), Description: req.Description,
		Level: req.Level, Roles: req.Roles, Permissions: req.Permissions, Groups: cloneNil(req.Groups), Modules: cloneNil(req.Modules),
		TrustedGateway: req.TrustedGateway, Limits: req.Limits, CreatedBy: creator.Subject, CreatedAt: now, ExpiresAt: req.ExpiresAt.UTC(),
	}
	if req.ExpiresAt.IsZero() {
		k.ExpiresAt = time.Time{}
	}
	if err := s.store.CreateKey(ctx, k); err != nil {
		return graph.APIKey{}, "", fmt.Errorf("identity: create key: %w", err)
	}
	return k, secret, nil
}

// mayGrant is the delegation rule of creating keys: below owner, a creator
// grants only what it holds itself, so that no key it makes sees or does
// more than it does. Roles and permissions: its own, and those its level
// already carries on the shared route rules (an admin passes the approver
// and tools:write rules, so it may make approver keys). Tool groups: its
// own ("*" when it has every group). Modules: within its own when it is
// restricted to some. Rate limits: no unlimited key from a limited creator,
// and no more a minute than the creator's own limit where it has one.
func mayGrant(creator Principal, req NewKey) error {
	if creator.AtLeast("owner") {
		return nil
	}
	roles, perms := slices.Clone(creator.Roles), slices.Clone(creator.Permissions)
	for _, r := range sharedRules {
		if r.MinLevel != "" && creator.AtLeast(r.MinLevel) {
			roles = append(roles, r.Roles...)
			perms = append(perms, r.Permissions...)
		}
	}
	if err := subset("roles", req.Roles, roles, false); err != nil {
		return err
	}
	if err := subset("permissions", req.Permissions, perms, false); err != nil {
		return err
	}
	if err := subset("groups", access.Caller{Groups: req.Groups}.EffectiveGroups(), creator.Caller().EffectiveGroups(), true); err != nil {
		return err
	}
	for _, l := range []struct {
		field       string
		want, holds int
	}{
		{"limits.searchPerMinute", req.Limits.SearchPerMinute, creator.Limits.Search},
		{"limits.executePerMinute", req.Limits.ExecutePerMinute, creator.Limits.Execute},
		{"limits.verbsPerMinute", req.Limits.VerbsPerMinute, creator.Limits.Verbs},
	} {
		// Negative is unlimited: only a creator without a limit grants none.
		if l.want < 0 && l.holds >= 0 {
			return fmt.Errorf("%s: unlimited is more than this credential holds: %w", l.field, fault.ErrForbidden)
		}
		if l.want > 0 && l.holds > 0 && l.want > l.holds {
			return fmt.Errorf("%s: %d a minute is more than this credential's own %d: %w", l.field, l.want, l.holds, fault.ErrForbidden)
		}
	}
	if creator.Modules != nil {
		if req.Modules == nil {
			return fmt.Errorf("modules: this credential is restricted to modules %s, so the keys it makes must be too: %w",
				strings.Join(creator.Modules, ", "), fault.ErrForbidden)
		}
		if err := subset("modules", req.Modules, creator.Modules, false); err != nil {
			return err
		}
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, refused) < 0
}

// refused reports a character a key's owner or description may not hold:
// a control character, or one that renders as nothing or reorders the
// text (a format character such as U+202E or U+200B, a variation
// selector, another default-ignorable code point), which would make one
// owner's name read as another's in key lists, the audit log and
// terminals.
func refused(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// MayManage is the level rule of creating and revoking keys: a principal
// manages keys at or below its own level only.
func MayManage(p Principal, level, verb string) error {
	if access.LevelRank(level) > access.LevelRank(p.Level) {
		return fmt.Errorf("level: %s may not %s %s key: %w", article(p.Level), verb, article(level), fault.ErrForbidden)
	}
	return nil
}

// List returns every key, without hashes.
func (s *KeyService) List(ctx context.Context) ([]graph.APIKey, error) {
	keys, err := s.store.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("identity: list keys: %w", err)
	}
	for i := range keys {
		keys[i].Hash = ""
	}
	return keys, nil
}

// Revoke revokes a key on behalf of revoker at once for this process
// (other processes see it within DefaultRevocationCheck). Unknown ids are
// fault.ErrNotFound. The level rule is creation's: a revoker may not
// revoke a key above its own level (an admin cannot revoke an owner's key).
// revoker is the zero Principal only for the operator on the host.
func (s *KeyService) Revoke(ctx context.Context, revoker Principal, id string) error {
	if !keyIDRe.MatchString(id) {
		return fault.Malformed("id", "must be a key id like k0123456789ab, got %q", id)
	}
	if revoker.Authenticated() {
		k, err := s.store.GetKey(ctx, id)
		if errors.Is(err, fault.ErrNotFound) {
			return fmt.Errorf("identity: key %q: %w", id, fault.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("identity: read key %q: %w", id, err)
		}
		if err := MayManage(revoker, k.Level, "revoke"); err != nil {
			return err
		}
	}
	if err := s.store.RevokeKey(ctx, id, s.now().UTC()); err != nil {
		if errors.Is(err, fault.ErrNotFound) {
			return fmt.Errorf("identity: key %q: %w", id, fault.ErrNotFound)
		}
		return fmt.Errorf("identity: revoke key %q: %w", id, err)
	}
	s.mu.Lock()
	delete(s.cache, id)
	s.mu.Unlock()
	return nil
}

// Verify returns the live key a secret belongs to. A malformed, unknown,
// wrong, expired or revoked secret is fault.ErrUnauthenticated with a
// message saying which (never echoing the secret), except that an unknown
// key and a wrong secret read alike.
func (s *KeyService) Verify(ctx context.Context, secret string) (graph.APIKey, error) {
	id, ok := ParseSecret(secret)
	if !ok {
		return graph.APIKey{}, fmt.Errorf("malformed API key: want %s<id>_<secret> as printed by 'toolsmith keys create': %w", SecretPrefix, fault.ErrUnauthenticated)
	}
	// An unknown id and a wrong secret read the same, so that a caller
	// cannot learn which key ids exist by guessing.
	refused := fmt.Errorf("API key %s is not valid here (unknown key or wrong secret): %w", id, fault.ErrUnauthenticated)
	k, err := s.lookup(ctx, id)
	if errors.Is(err, fault.ErrUnauthenticated) {
		return graph.APIKey{}, refused
	}
	if err != nil {
		return graph.APIKey{}, err
	}
	want, err := hex.DecodeString(k.Hash)
	got := sha256.Sum256([]byte(secret))
	if err != nil || subtle.ConstantTimeCompare(want, got[:]) != 1 {
		return graph.APIKey{}, refused
	}
	return s.live(k)
}

// Live returns the key with id when it is still live: neither revoked nor
// expired (as Verify decides, and from the same cache), without its
// secret. A session opened with a key asks it again on each use, so
// revoking the key ends the session.
func (s *KeyService) Live(ctx context.Context, id string) (graph.APIKey, error) {
	k, err := s.lookup(ctx, id)
	if err != nil {
		return graph.APIKey{}, err
	}
	return s.live(k)
}

func (s *KeyService) live(k graph.APIKey) (graph.APIKey, error) {
	id := k.ID
	now := s.now()
	if !k.RevokedAt.IsZero() {
		return graph.APIKey{}, fmt.Errorf("API key %s was revoked at %s: %w", id, k.RevokedAt.UTC().Format(time.RFC3339), fault.ErrUnauthenticated)
	}
	if !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt) {
		return graph.APIKey{}, fmt.Errorf("API key %s expired at %s: %w", id, k.ExpiresAt.UTC().Format(time.RFC3339), fault.ErrUnauthenticated)
	}
	return k, nil
}

func (s *KeyService) lookup(ctx context.Context, id string) (graph.APIKey, error) {
	now := s.now()
	s.checkRevocations(ctx, now)
	s.mu.RLock()
	c, ok := s.cache[id]
	s.mu.RUnlock()
	if ok && now.Sub(c.at) < s.ttl {
		return c.key, nil
	}
	k, err := s.store.GetKey(ctx, id)
	if errors.Is(err, fault.ErrNotFound) {
		return graph.APIKey{}, fmt.Errorf("API key %s is not known here: %w", id, fault.ErrUnauthenticated)
	}
	if err != nil {
		return graph.APIKey{}, fmt.Errorf("identity: read key %s: %w", id, err)
	}
	s.mu.Lock()
	if len(s.cache) > 10_000 {
		clear(s.cache) // bound memory under a flood of distinct valid ids
	}
	s.cache[id] = cachedKey{key: k, at: now}
	s.mu.Unlock()
	return k, nil
}

// checkRevocations asks the store for its count of revoked keys at most
// once per poll interval and drops the cache when it changed (or when the
// store cannot say: the lookup then reads the key itself). Concurrent
// lookups do not wait for the check: one caller makes it.
func (s *KeyService) checkRevocations(ctx context.Context, now time.Time) {
	last := s.checkedAt.Load()
	if s.poll > 0 && now.UnixNano()-last < int64(s.poll) {
		return
	}
	if !s.checkedAt.CompareAndSwap(last, now.UnixNano()) {
		return // another lookup is checking
	}
	n, err := s.store.RevokedKeys(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || n != s.revoked {
		clear(s.cache)
		s.revoked = n
		if err != nil {
			s.revoked = -1
			s.checkedAt.Store(0) // ask again next time
		}
	}
}

// KeyPrincipal is the principal of a verified key.
func KeyPrincipal(k graph.APIKey) Principal {
	return Principal{
		Subject: "key:" + k.ID, Name: k.Owner, Method: MethodAPIKey, KeyID: k.ID, Level: k.Level,
		Roles: cloneNil(k.Roles), Permissions: cloneNil(k.Permissions), Groups: cloneNil(k.Groups), Modules: cloneNil(k.Modules),
		TrustedGateway: k.TrustedGateway,
		Limits:         Limits{Search: k.Limits.SearchPerMinute, Execute: k.Limits.ExecutePerMinute, Verbs: k.Limits.VerbsPerMinute},
	}
}

// HashSecret is the stored form of a secret: hex SHA-256. Secrets carry 256
// random bits, so a fast hash is enough; no password stretching is needed.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// ParseSecret returns the key id inside a secret, and whether it has the
// secret's shape.
func ParseSecret(secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return "", false
	}
	id, body, ok := strings.Cut(rest, "_")
	if !ok || !keyIDRe.MatchString(id) || len(body) != 43 {
		return "", false
	}
	if _, err := base64.RawURLEncoding.DecodeString(body); err != nil {
		return "", false
	}
	return id, true
}

func newSecret() (id, secret string, err error) {
	var idb [6]byte
	var body [32]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return "", "", fmt.Errorf("identity: random key id: %w", err)
	}
	if _, err := rand.Read(body[:]); err != nil {
		return "", "", fmt.Errorf("identity: random key secret: %w", err)
	}
	id = "k" + hex.EncodeToString(idb[:])
	return id, SecretPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(body[:]), nil
}

// article puts "a" or "an" before a level's name ("an admin", "a user").
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}
