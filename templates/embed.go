// Package templates holds the text templates of the code Toolsmith
// generates: the wrapper plugin's main program, its test and its go.mod.
// They live at the repository root (the design card's templates/) and are
// embedded here because //go:embed cannot reach parent directories.
// Templates hold layout only; every decision is made by codegen's Go helpers.
package templates

import "embed"

// FS holds every *.tmpl file of this directory.
//
//go:embed *.tmpl
var FS embed.FS
