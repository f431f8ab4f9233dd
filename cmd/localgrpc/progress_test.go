package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// The estimate uses each unit's last duration once it has run, and the
// mean of those that have for the others.
func TestProgressEstimate(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, 3, 2, 0) // 3 units, 2 rounds, no guess
	if got := p.left(); got != "time left unknown" {
		t.Errorf("before any run: %q", got)
	}
	p.guess = time.Second
	if got := p.left(); got != "~6s left" {
		t.Errorf("from the guess alone: %q, want 6 runs of 1s", got)
	}
	// Unit 0 ran once, in 2s; unit 1 failed, so its runs are skipped.
	p.took[0] = 2 * time.Second
	p.end(0)
	p.skip(1)
	// Left: unit 0 once more (2s) and unit 2 twice at the mean (2s each).
	if got := p.left(); got != "~6s left" {
		t.Errorf("after one run: %q", got)
	}
	if p.finished != 3 || p.total != 6 {
		t.Errorf("finished %d of %d, want 3 of 6", p.finished, p.total)
	}
}

// On a terminal the bar is redrawn in place and never wider than the
// terminal.
func TestProgressBar(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, 4, 1, time.Second)
	p.tty, p.width = true, 60
	p.start(0, "ListStrings/impl=inproc-share-isolated/respSize=100-2", 1)
	p.took[0] = time.Second
	p.end(0)
	out.Reset()
	p.draw()
	line := out.String()
	if !strings.HasPrefix(line, "\r\x1b[K[======>") || strings.Contains(line, "\n") {
		t.Errorf("bar %q", line)
	}
	if n := len([]rune(strings.TrimPrefix(line, "\r\x1b[K"))); n > 59 {
		t.Errorf("bar of %d columns on a terminal of 60: %q", n, line)
	}
	if !strings.Contains(line, " 25% 1/4  ~3s left  ListStrings/") {
		t.Errorf("bar %q lacks the count and estimate", line)
	}
}

// Off a terminal, progress writes a line per workload of each round, not
// per run, and a failure at once.
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	impls := []string{"localhost", "unix", "inproc-clone-isolated"}
	workloads := []string{"Unary", "PingPong"}
	const rounds = 2
	p := newProgress(&out, len(impls)*len(workloads), rounds, time.Millisecond)
	for round := 1; round <= rounds; round++ {
		i := 0
		for _, w := range workloads {
			for _, impl := range impls {
				// As bench does: a unit that failed is skipped after.
				switch {
				case i == 4 && round == 1:
					p.start(i, w+"/impl="+impl+"-2", round)
					p.fail(i, errors.New("broken"))
				case i == 4:
					p.skip(i)
				default:
					p.start(i, w+"/impl="+impl+"-2", round)
					p.done(i, "1µs/op")
				}
				i++
			}
		}
	}
	p.finish()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{
		"[3/12] Unary round 1: 3 runs in ",
		"[6/12] FAIL PingPong/impl=unix-2: broken",
		"[7/12] PingPong round 1: 2 runs in ",
		"[10/12] Unary round 2: 3 runs in ",
		"[12/12] PingPong round 2: 2 runs in ",
		"ran 12 of 12 runs in ",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), &out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to begin %q", i+1, lines[i], w)
		}
	}
}
