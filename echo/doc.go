// Package echo implements the Echo API of proto/echo/v1: Get returns the
// request's text, Expand streams one response per word, Collect joins a
// stream of texts, Update answers each request as it arrives.
package echo
