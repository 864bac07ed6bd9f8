// Package ratelimit holds the per-caller rate limits every edge applies:
// REST routes of a limit class (api.Rules) and the MCP tools that search,
// execute or fulfil (mcp.Limits) take from the same token buckets, so a key
// has one budget per class whichever door it comes through.
//
// Buckets live in the process: replicas each enforce the limit on their own.
package ratelimit
