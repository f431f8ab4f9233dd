package main

// How long the README's two commands take on a 2-CPU machine, from a
// fresh clone with empty caches, as last measured: a full bench 4 min 50 s
// to 5 min 45 s, --quick 42 s, the first download and compile 35 s to
// 2.5 min, the tests 3 min 15 s to 4 min 17 s. They are stated once, here: bench
// --help takes them from here, and TestRunTimesAgree checks that the
// README, docs/cli.md and this command's package doc say the same and
// no other figure.
const (
	fullBenchTakes    = "about 5 minutes"
	quickBenchTakes   = "about 45 seconds"
	firstCompileTakes = "about 1 to 3 minutes"
	testsTake         = "about 3 to 4 minutes"
)
