package graph_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

// scripted answers Refresh from a script, then ends the follow.
type scripted struct {
	answers []func() ([]string, error)
	cancel  context.CancelFunc
}

func (s *scripted) Refresh(context.Context) ([]string, error) {
	if len(s.answers) == 0 {
		s.cancel()
		return nil, nil
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a()
}

// TestFollowHandsOnChangesAndKeepsGoing: Follow hands each non-empty
// Refresh to changed, an empty one to nobody, an error to failed, and
// goes on after an error until its context ends.
func TestFollowHandsOnChangesAndKeepsGoing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	boom := errors.New("boom")
	f := &scripted{cancel: cancel, answers: []func() ([]string, error){
		func() ([]string, error) { return nil, nil },
		func() ([]string, error) { return []string{"a"}, nil },
		func() ([]string, error) { return nil, boom },
		func() ([]string, error) { return []string{"b", "c"}, nil },
	}}
	var changed [][]string
	var failed []error
	graph.Follow(ctx, f, time.Millisecond, func(ids []string) { changed = append(changed, ids) }, func(err error) { failed = append(failed, err) })
	if !slices.EqualFunc(changed, [][]string{{"a"}, {"b", "c"}}, slices.Equal[[]string]) {
		t.Errorf("changed got %v, want [[a] [b c]]", changed)
	}
	if len(failed) != 1 || !errors.Is(failed[0], boom) {
		t.Errorf("failed got %v, want [boom]", failed)
	}
}
