//go:build race

package inproc_test

// raceDetector says the race detector is on: tests of no concurrency that
// it would slow past a few seconds skip.
const raceDetector = true
