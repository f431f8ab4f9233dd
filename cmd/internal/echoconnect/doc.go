// Package echoconnect serves the Echo API on connect-go, with the
// behaviour of package echo, so that the CLI compares the two stacks on one
// service.
package echoconnect
