package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

// levels records the level of every log record the console writes.
type levels struct {
	mu  sync.Mutex
	got []slog.Level
}

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, r.Level)
	return nil
}
func (l *levels) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levels) WithGroup(string) slog.Handler      { return l }

// worst is the highest level logged (below debug when nothing was).
func (l *levels) worst() slog.Level {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := slog.LevelDebug - 1
	for _, x := range l.got {
		w = max(w, x)
	}
	return w
}

// A review id the API refuses (NUL, invalid UTF-8, a control character,
// overlong) is a 400 page naming id on every review page and form, as the
// API's 400: the review service and Temporal are never asked, and nothing
// is logged above info (it used to be a 503 logged as an error).
func TestMalformedReviewIDsAre400(t *testing.T) {
	e := newEnv(t)
	c := e.console()
	logged := &levels{}
	c.log = slog.New(logged)
	b := e.browser(c)
	b.signIn(e.admin)
	csrf := b.formToken("/ui/sources")
	for _, id := range []string{"%00", "%ff", "a%01b", "a%20b", strings.Repeat("a", 201)} {
		for _, req := range []struct {
			method, path string
			form         url.Values
		}{
			{"GET", "/ui/reviews/" + id, nil},
			{"POST", "/ui/reviews/" + id + "/approve", url.Values{"csrf": {csrf}}},
			{"POST", "/ui/reviews/" + id + "/reject", url.Values{"csrf": {csrf}, "reason": {"no"}}},
			{"GET", "/ui/tools/" + id, nil},
			{"POST", "/ui/keys/" + id + "/revoke", url.Values{"csrf": {csrf}}},
		} {
			w := b.do(req.method, req.path, req.form)
			body := w.Body.String()
			if w.Code != http.StatusBadRequest || !strings.Contains(body, "id: must") || !strings.Contains(body, "Malformed address") {
				t.Errorf("%s %.60s: %d, want a 400 page naming id\n%.400s", req.method, req.path, w.Code, body)
			}
		}
	}
	if calls := e.tc.called(); len(calls) != 0 {
		t.Fatalf("a malformed id reached Temporal: %v", calls)
	}
	if lv := logged.worst(); lv > slog.LevelInfo {
		t.Fatalf("a malformed id was logged at %v", lv)
	}
	// A well-formed id is the service's to judge, as before.
	if w := b.do("GET", "/ui/reviews/airlock-missing", nil); w.Code != http.StatusNotFound {
		t.Fatalf("unknown review: %d", w.Code)
	}
}

// The gaps page reads ?status= as GET /api/v1/gaps does: open by default,
// closed or all; another value (or an empty one) is a 400 naming status.
func TestGapsPageChecksStatusAsTheAPIDoes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, verb := range []string{"OPEN_VERB", "CLOSED_VERB"} {
		if _, err := e.st.RecordGap(ctx, graph.GapEvent{Verb: verb, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.st.CloseGap(ctx, "CLOSED_VERB", "pets.find", time.Now()); err != nil {
		t.Fatal(err)
	}
	b := e.browser(e.console())
	b.signIn(e.admin)
	for _, bad := range []string{"%01", "%ff", "", "opened"} {
		w := b.do("GET", "/ui/gaps?status="+bad, nil)
		if body := w.Body.String(); w.Code != http.StatusBadRequest || !strings.Contains(body, "status: must be open, closed or all") {
			t.Errorf("status=%s: %d, want a 400 naming status\n%.400s", bad, w.Code, body)
		}
	}
	for status, want := range map[string][]string{"": {"OPEN_VERB"}, "?status=open": {"OPEN_VERB"}, "?status=closed": {"CLOSED_VERB"}, "?status=all": {"OPEN_VERB", "CLOSED_VERB"}} {
		w := b.do("GET", "/ui/gaps"+status, nil)
		body := w.Body.String()
		if w.Code != http.StatusOK {
			t.Errorf("gaps%s: %d", status, w.Code)
		}
		for _, v := range []string{"OPEN_VERB", "CLOSED_VERB"} {
			if shown := strings.Contains(body, v); shown != (v == want[0] || len(want) > 1 && v == want[1]) {
				t.Errorf("gaps%s: %s shown %v, want %v", status, v, shown, !shown)
			}
		}
	}
}

// The audit page refuses a since in the future as the API does (the empty
// page would read as "nothing happened"), naming since.
func TestAuditPageRefusesAFutureSince(t *testing.T) {
	b, e := newBrowser(t)
	b.signIn(e.admin)
	future := time.Now().Add(48 * time.Hour).UTC().Format("2006-01-02T15:04")
	w := b.do("GET", "/ui/audit?since="+future, nil)
	if body := w.Body.String(); w.Code != http.StatusBadRequest || !strings.Contains(body, "since: must not be in the future") {
		t.Fatalf("since in the future: %d\n%.600s", w.Code, body)
	}
	if w := b.do("GET", "/ui/audit?since=2020-01-01T00:00", nil); w.Code != http.StatusOK {
		t.Fatalf("since in the past: %d", w.Code)
	}
}
