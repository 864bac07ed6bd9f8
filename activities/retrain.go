package activities

import (
	"context"
	"errors"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
)

// Retrain holds the activities of RetrainWorkflow. The candidate's adapter
// (a matrix of up to a few MiB) stays in the store: the activities pass
// its version id, never the matrix, through the workflow's history.
type Retrain struct {
	// Service trains, evaluates and promotes; nil makes every activity
	// fail with "not configured".
	Service *retrain.Service
}

// TrainCandidateInput tunes one training (zero fields: retrain's defaults).
type TrainCandidateInput struct {
	Options retrain.Options `json:"options"`
}

// TrainedCandidate is what TrainCandidate stored: the version's id and
// what it was trained on.
type TrainedCandidate struct {
	ID           string         `json:"id"`
	Parent       string         `json:"parent,omitempty"`
	Counts       retrain.Counts `json:"counts"`
	Scale        float64        `json:"scale"`
	TrainSeconds float64        `json:"trainSeconds"`
}

// ConcludeInput is the gate's decision on a candidate.
type ConcludeInput struct {
	ID      string       `json:"id"`
	Promote bool         `json:"promote"`
	Reason  string       `json:"reason"`
	Gate    retrain.Gate `json:"gate"`
}

func (a *Retrain) service() (*retrain.Service, error) {
	if a == nil || a.Service == nil {
		return nil, Fail(ErrTypeInvalidInput, "activities: ranking retraining is not configured on this worker")
	}
	return a.Service, nil
}

// retrainError makes a domain error a Temporal one: bad input and missing
// versions do not get better with retries; store and embedder errors go
// back wrapped for the retry policy.
func retrainError(err error) error {
	if errors.Is(err, fault.ErrInvalid) || errors.Is(err, fault.ErrMalformed) || errors.Is(err, fault.ErrNotFound) {
		return Fail(ErrTypeInvalidInput, "%v", err)
	}
	return err
}

// TrainCandidate trains a candidate from the catalogue and the served
// queries (the most recent kept out) and stores it.
func (a *Retrain) TrainCandidate(ctx context.Context, in TrainCandidateInput) (TrainedCandidate, error) {
	s, err := a.service()
	if err != nil {
		return TrainedCandidate{}, err
	}
	v, err := s.Train(ctx, in.Options)
	if err != nil {
		return TrainedCandidate{}, retrainError(err)
	}
	return TrainedCandidate{ID: v.ID, Parent: v.Parent, Counts: v.Counts, Scale: v.Scale, TrainSeconds: v.TrainSeconds}, nil
}

// EvaluateCandidate replays the candidate's held-out queries with the
// current model and with the candidate.
func (a *Retrain) EvaluateCandidate(ctx context.Context, id string) (retrain.Evaluation, error) {
	s, err := a.service()
	if err != nil {
		return retrain.Evaluation{}, err
	}
	ev, err := s.Evaluate(ctx, id)
	if err != nil {
		return retrain.Evaluation{}, retrainError(err)
	}
	return ev, nil
}

// ConcludeCandidate records the decision: the candidate is promoted (and
// applied in this process) or rejected with the reason. It returns the
// version's status.
func (a *Retrain) ConcludeCandidate(ctx context.Context, in ConcludeInput) (string, error) {
	s, err := a.service()
	if err != nil {
		return "", err
	}
	v, err := s.Conclude(ctx, in.ID, in.Promote, in.Reason, in.Gate)
	if err != nil {
		return "", retrainError(err)
	}
	return v.Status, nil
}
