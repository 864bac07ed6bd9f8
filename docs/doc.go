// Package docs holds Toolsmith's reference pages (the Markdown files beside
// this one), the test that keeps their links and the README's pointing at
// files and headings that exist, and the test that keeps comments and pages
// free of citations of documents outside the repository (numbered seeds and
// issues). It has no code of its own.
package docs
