//go:build race

package inprochttp_test

// raceDetector says the race detector is on: tests that must touch what
// net/http leaves unsynchronized skip that part.
const raceDetector = true
