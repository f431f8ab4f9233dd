//go:build !race

package inproc_test

const raceDetector = false
