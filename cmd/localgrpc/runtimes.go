package main

// How long the README's two commands take on a 2-CPU machine, from a
// fresh clone, as last measured. They are stated once, here: bench
// --help takes them from here, and TestRunTimesAgree checks that the
// README, docs/cli.md and this command's package doc say the same and
// no other figure.
const (
	fullBenchTakes    = "about 6 minutes"
	quickBenchTakes   = "about 45 seconds"
	firstCompileTakes = "about 2.5 minutes"
	testsTake         = "about 4 minutes"
)
