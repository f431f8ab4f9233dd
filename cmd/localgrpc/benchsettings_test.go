package main

import (
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
	"github.com/localgrpc/localgrpc/cmd/internal/report"
)

// The verdict knows what every impl of the suite is for: an impl it does
// not know it would never recommend nor compare with.
func TestVerdictKnowsEveryImpl(t *testing.T) {
	for _, impl := range bench.Impls() {
		if !report.KnownImpl(impl) {
			t.Errorf("impl %s is not in the verdict's table (cmd/internal/report/verdict.go)", impl)
		}
	}
}

// The settings are the values the run used: --quick's and the defaults
// resolved, the filters only when set.
func TestSettings(t *testing.T) {
	f := benchFlags{quick: true, strings: quickStrings, benchtime: quickBenchtime, count: 5, callers: 1, cpu: []int{1, 2}, confidence: 0.9, baseline: "localhost", impl: "inproc", untested: true}
	got := ""
	for _, s := range f.settings() {
		got += s.Key + "=" + s.Value + ";"
	}
	want := "quick=true;strings=1000;size=100 B a string, 5 B an Echo text;benchtime=40ms;count=5;callers=1;cpu=1,2;confidence=0.9;baseline=localhost;impl=inproc;untested=true;"
	if got != want {
		t.Errorf("settings\n %s\nwant\n %s", got, want)
	}
}
