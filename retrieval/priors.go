package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// RankingSnapshot is the snapshot the scheduled analytics store for ranking
// (analytics.SnapshotRanking; the analytics package writes it).
const RankingSnapshot = "ranking"

// priorTTL is how long the popularity priors are used before the snapshot
// is read again (the analytics run daily).
const priorTTL = time.Minute

// priorCache keeps the scheduled analytics' popularity priors.
type priorCache struct {
	mu     sync.Mutex
	read   time.Time
	values map[string]float64
}

// popularity returns each tool's popularity prior from the latest ranking
// snapshot (empty until the analytics first ran).
func (s *Service) popularity(ctx context.Context) (map[string]float64, error) {
	s.priors.mu.Lock()
	defer s.priors.mu.Unlock()
	now := s.opts.Now()
	if s.priors.values != nil && now.Sub(s.priors.read) < priorTTL {
		return s.priors.values, nil
	}
	snap, err := s.store.GetSnapshot(ctx, RankingSnapshot)
	switch {
	case errors.Is(err, fault.ErrNotFound):
		s.priors.values, s.priors.read = map[string]float64{}, now
		return s.priors.values, nil
	case err != nil:
		return nil, fmt.Errorf("retrieval: ranking priors: %w", err)
	}
	var p struct {
		Popularity map[string]float64 `json:"popularity"`
	}
	if err := json.Unmarshal(snap.Data, &p); err != nil {
		return nil, fmt.Errorf("retrieval: ranking priors: %w", err)
	}
	if p.Popularity == nil {
		p.Popularity = map[string]float64{}
	}
	s.priors.values, s.priors.read = p.Popularity, now
	return p.Popularity, nil
}

// ForgetPriors makes the next search read the ranking priors again (after
// the analytics stored new ones).
func (s *Service) ForgetPriors() {
	s.priors.mu.Lock()
	s.priors.values = nil
	s.priors.mu.Unlock()
}
