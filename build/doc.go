// Package build is the build half of find-or-build: when no tool fits a
// verb, nothing decomposes it and no external definition can be onboarded,
// a language model writes a small Go program for it, with its test cases
// and the hosts it needs. This package owns that program's shape and its
// guard rails:
//
//   - Program is what the model answers (structured JSON); Validate checks
//     its fields and CheckSource parses its source (go/parser): package
//     main, imports only from AllowedImports, no main or init of its own,
//     no //go: directives, and no reference to the harness's internals.
//   - Files lays the program out as a module in the airlock wrappers'
//     shape: a generated harness speaks the wrappers' stdin/stdout protocol
//     (kit.Request in, kit.Result out) and gives the program its only way
//     out, a Web whose calls reach the approved hosts alone; a generated
//     test runs the model's test cases against answers it fakes per case.
//   - Verify compiles and tests the module in the wrappers' sandbox
//     (codegen.Verify: offline build, tests in a loopback-only network
//     namespace where one can be made, a time limit).
//   - Write asks the model (langchaingo, JSON mode) and counts its tokens.
//   - Highlight draws Go source as HTML spans from go/scanner tokens, for
//     the review page (no script, so it is CSP-safe).
//
// The workflow that runs rounds of Write and Verify and parks the result
// for review is workflows.BuildToolWorkflow.
package build
