// Package retrain keeps the learned ranking model of a deployment: it
// trains a candidate (a query-side adapter over the frozen embedder, and
// ranking weights) from the deployment's own catalogue and the queries its
// tools served, evaluates it against the current model on a replay of the
// most recent served queries that training never saw, and promotes it
// only when it is better by a stated margin (Gate). Versions are kept in
// the store (graph.ModelVersions) with their figures; the promoted one is
// what retrieval applies (retrieval.Service.SetModel), at start and on
// every promotion or rollback in this process.
//
// RetrainWorkflow (workflows/) runs Train, Evaluate and Conclude as
// activities; the admin routes (api/ranking) list versions, start a
// retrain and roll back through the same Service.
package retrain
