package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchunit"
	"golang.org/x/term"
)

// progress reports a run's progress on stderr with an estimate of the time
// left. On a terminal it is one bar redrawn in place; elsewhere (a log, a
// pipe) a line per workload of each round, and a line per failure: a line
// per run made hundreds of lines that the report repeats.
//
// The estimate learns as it goes: every round runs the same units (a case
// at a GOMAXPROCS), so once a unit has run, its last duration predicts its
// next; units not yet run are guessed at the mean of those that have, or
// at --benchtime before any has.
type progress struct {
	w     io.Writer
	tty   bool
	width int // of the terminal, in columns

	total, finished int             // runs planned; runs finished or skipped
	runsLeft        []int           // per unit
	took            []time.Duration // per unit: its last run, 0 before it ran
	guess           time.Duration   // of a run, before any has finished
	startedAt       time.Time       // of the whole run
	began           time.Time       // of the run in progress
	name            string          // of the run in progress, or the last
	round           int
	rounds          int  // planned; with one, runs are not numbered
	running         bool // whether a run is in progress

	// Off a terminal: the workload whose runs of this round are being
	// made, and how many of them have ended since it began.
	group      string
	groupRound int
	groupRuns  int
	groupBegan time.Time
}

// newProgress returns a progress for count rounds of units units, each run
// of which should take about guess.
func newProgress(w io.Writer, units, count int, guess time.Duration) *progress {
	p := &progress{w: w, total: units * count, rounds: count, runsLeft: make([]int, units), took: make([]time.Duration, units), guess: guess, startedAt: time.Now()}
	for i := range p.runsLeft {
		p.runsLeft[i] = count
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
		p.width = 80
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			p.width = width
		}
	}
	return p
}

// start notes that unit i, named name (WORKLOAD/impl=...), starts its run
// of round round.
func (p *progress) start(i int, name string, round int) {
	now := time.Now()
	if !p.tty {
		w, _, _ := strings.Cut(name, "/")
		if w != p.group || round != p.groupRound {
			p.endGroup()
			p.group, p.groupRound, p.groupRuns, p.groupBegan = w, round, 0, now
		}
	}
	p.began, p.name, p.round, p.running = now, name, round, true
	if p.tty {
		p.draw()
	}
}

// done notes that unit i's run ended, with result to show on a terminal.
func (p *progress) done(i int, result string) {
	p.took[i] = time.Since(p.began)
	p.end(i)
	if p.tty {
		p.draw()
		return
	}
	p.groupRuns++
}

// endGroup writes the line of the workload whose runs have ended, if
// any did: "[24/120] Unary round 2: 12 runs in 1s, ~40s left".
func (p *progress) endGroup() {
	if p.groupRuns == 0 {
		return
	}
	round := ""
	if p.rounds > 1 {
		round = " round " + strconv.Itoa(p.groupRound)
	}
	runs := "runs"
	if p.groupRuns == 1 {
		runs = "run"
	}
	fmt.Fprintf(p.w, "[%d/%d] %s%s: %d %s in %s, %s\n", p.finished, p.total, p.group, round, p.groupRuns, runs, time.Since(p.groupBegan).Round(100*time.Millisecond), p.left())
	p.groupRuns = 0
}

// perOp is a benchmark's time per op: "1.234µs/op".
func perOp(r testing.BenchmarkResult) string {
	return benchunit.Scale(float64(r.T.Nanoseconds())/float64(max(r.N, 1))/1e9, benchunit.Decimal) + "s/op"
}

// fail notes that unit i failed with err; its other runs are skipped.
func (p *progress) fail(i int, err error) {
	p.end(i)
	p.skip(i)
	fmt.Fprintf(p.w, "%s[%d/%d] FAIL %s: %v\n", p.clear(), p.finished, p.total, p.name, err)
}

func (p *progress) end(i int) {
	p.running = false
	p.finished++
	p.runsLeft[i]--
}

// skip notes that the runs left of unit i, which failed, are left out.
func (p *progress) skip(i int) {
	p.finished += p.runsLeft[i]
	p.runsLeft[i] = 0
}

// finish ends the report with the time the run took.
func (p *progress) finish() {
	if !p.tty {
		p.endGroup()
	}
	fmt.Fprintf(p.w, "%sran %d of %d runs in %s\n", p.clear(), p.finished, p.total, time.Since(p.startedAt).Round(time.Second))
}

// numbered is the run's round after prefix, or nothing if there is one
// round.
func (p *progress) numbered(prefix string) string {
	if p.rounds == 1 {
		return ""
	}
	return prefix + strconv.Itoa(p.round)
}

// clear is what erases the bar on a terminal: nothing elsewhere.
func (p *progress) clear() string {
	if p.tty {
		return "\r\x1b[K"
	}
	return ""
}

// draw redraws the bar: "[=====>    ]  37% 117/315  ~1m02s left  NAME #3",
// cut to the terminal's width so that it never wraps.
func (p *progress) draw() {
	const barWidth = 24
	filled := barWidth * p.finished / max(p.total, 1)
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	line := fmt.Sprintf("[%s] %3d%% %d/%d  %s  %s%s", bar, 100*p.finished/max(p.total, 1), p.finished, p.total, p.left(), p.name, p.numbered(" #"))
	if r := []rune(line); len(r) > p.width-1 {
		line = string(r[:p.width-1])
	}
	fmt.Fprint(p.w, p.clear()+line)
}

// left is the estimate of the time left: "~1m02s left", or "time left
// unknown" before anything suggests one.
func (p *progress) left() string {
	var sum, n time.Duration
	for _, d := range p.took {
		if d > 0 {
			sum, n = sum+d, n+1
		}
	}
	mean := p.guess
	if n > 0 {
		mean = sum / n
	}
	if mean == 0 {
		return "time left unknown"
	}
	var left time.Duration
	for i, runs := range p.runsLeft {
		d := p.took[i]
		if d == 0 {
			d = mean
		}
		left += time.Duration(runs) * d
	}
	if p.running {
		// The run in progress has used some of its share already.
		left -= min(time.Since(p.began), left)
	}
	return "~" + left.Round(time.Second).String() + " left"
}
