//go:build !race

package inprochttp_test

const raceDetector = false
