// Package ratelimit holds the per-caller rate limits every edge applies:
// REST routes of a limit class (api.Rules) and the MCP tools that search,
// execute or fulfil (mcp.Limits) take from the same counts, so a key
// has one budget per class whichever door it comes through.
//
// The counts live in the store (graph.RateCounts), so replicas over one
// store share them: see Limiter for the algorithm and the bound.
package ratelimit
