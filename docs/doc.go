// Package docs holds Toolsmith's reference pages (the Markdown files beside
// this one) and the test that keeps their links and the README's pointing
// at files and headings that exist. It has no code of its own.
package docs
