package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
)

// The verdict lives here, with a small table of what each impl is for,
// rather than in package bench, which defines the impls, because it is a
// reading of a Report: it tests the difference of any two rows on the
// runs only a Report keeps, it can judge results read back from a file as
// well as a live run's, and bench stays a benchmark suite with nothing of
// presentation. The table names bench's impls; the CLI's tests, which see
// both packages, check that every impl of the suite is in it. An impl
// missing from it is never recommended nor compared with.

// An implKind is what an impl is for, which is all the verdict needs to
// know of it.
type implKind int

const (
	kindOther       implKind = iota // yardsticks the verdict leaves out: direct, chan, iter, bufconn
	kindDefault                     // inproc as inproc.New makes it: the pick within a process
	kindMode                        // inproc's other modes, faster where their rules hold
	kindRival                       // another in-process channel, to compare ours with (versus)
	kindTCP                         // grpc-go over localhost TCP: the reference for sockets
	kindSocket                      // across processes on one machine: unix and abstract sockets
	kindFloor                       // the least a channel keeping inproc's contract pays
	kindHTTP                        // connect-go's handlers, compared with the same over a socket (versus)
	kindXproc                       // shm:, with the server in another process: the pick between processes
	kindXprocSocket                 // grpc-go over a socket, the server in another process: the reference there
	kindXprocFloor                  // the machine's floor between two processes
)

// An implInfo is what the verdict knows of an impl: its kind, what a
// reader needs to be told of it, if anything, and for a rival, the impls
// of ours that do the same work (copying, or sharing, messages).
type implInfo struct {
	name   string
	kind   implKind
	about  string
	versus []string
}

// implKinds are package bench's impls, in the order the verdict names
// them.
var implKinds = []implInfo{
	{"inproc-clone-isolated", kindDefault, "the default", nil},
	{"inproc-share-isolated", kindMode, "", nil},
	{"inproc-clone-inline", kindMode, "", nil},
	{"inproc-share-inline", kindMode, "", nil},
	{"grpchan", kindRival, "fullstorydev/grpchan, copying messages", []string{"inproc-clone-isolated"}},
	{"grpchan-share", kindRival, "grpchan sharing messages", []string{"inproc-share-isolated", "inproc-share-inline"}},
	{"localhost", kindTCP, "grpc-go over TCP", nil},
	{"unix", kindSocket, "", nil},
	{"abstract", kindSocket, "", nil},
	{"bufconn", kindOther, "", nil},
	{"chan", kindOther, "", nil},
	{"iter", kindOther, "", nil},
	{"direct", kindOther, "", nil},
	{"floor", kindFloor, "the least a channel keeping inproc's contract pays through generated code", nil},
	{"connect-inproc", kindHTTP, "connect-go in-process through inprochttp", []string{"connect-unix"}},
	{"connect-unix", kindHTTP, "connect-go over a unix socket", nil},
	{"xproc-shm", kindXproc, "localgrpc's shm: transport, the server in another process", nil},
	{"xproc-unix", kindXprocSocket, "grpc-go over a unix socket, the server in another process", nil},
	{"xproc-abstract", kindXprocSocket, "grpc-go over an abstract socket, the server in another process", nil},
	{"xproc-floor-ring", kindXprocFloor, "a shared-memory ring each way, woken by an eventfd: no gRPC", nil},
	{"xproc-floor-socketpair", kindXprocFloor, "a unix socketpair round trip: no gRPC", nil},
}

// KnownImpl says whether the verdict knows what the impl name is for.
func KnownImpl(name string) bool {
	return slices.ContainsFunc(implKinds, func(k implInfo) bool { return k.name == name })
}

// infoOf is what the table says of the impl name: nothing but kindOther
// if it is unknown.
func infoOf(name string) implInfo {
	for _, k := range implKinds {
		if k.name == name {
			return k
		}
	}
	return implInfo{name: name, kind: kindOther}
}

// kindOf is the kind of the impl name; kindOther if it is unknown.
func kindOf(name string) implKind { return infoOf(name).kind }

// Conclude returns the verdict of r: what to pick to call a service on
// one machine and why, a paragraph per choice, each figure a ratio of two
// medians of one group of r. It speaks only of the impls and workloads r
// measured, and gives a ratio only where a Mann-Whitney U test finds the
// difference significant (p < 0.05, as the tables' ~ says): elsewhere it
// says "no significant difference".
//
// The in-process pick is compared with the baseline (with localhost
// instead when the baseline is itself an inproc mode, which says nothing
// of calling within a process against calling without), inproc's other
// modes with the default, grpchan with the inproc modes that copy or
// share as it does, connect-go in-process with connect-go over a socket,
// shm: with grpc-go over a socket between processes, and the sockets with
// localhost. What is left to gain against the floors is LeftToGain's.
func (r *Report) Conclude() []string {
	return paragraphs(r.choices())
}

// LeftToGain returns what is left to gain against the floors r measured,
// in paragraphs like Conclude's: inproc's default against the least a
// channel keeping inproc's contract pays, and shm: against the machine's
// floors between two processes. It is for maintainers, who decide what
// to optimize; a user choosing an impl needs Conclude alone.
func (r *Report) LeftToGain() []string {
	return paragraphs(r.floorChoices())
}

// paragraphs are the paragraphs of cs, in order.
func paragraphs(cs []choice) []string {
	v := make([]string, len(cs))
	for i, c := range cs {
		v[i] = c.paragraph()
	}
	return v
}

// A situation is what a choice of the verdict is about. It decides the
// words of the choice's paragraph and of its line in the terminal.
type situation int

const (
	pickInProcess         situation = iota // inproc's default against the reference
	modesInProcess                         // inproc's other modes against the default
	modesOnlyInProcess                     // the modes run, without the default, against the reference
	noInProcess                            // no inproc impl ran
	versusRival                            // ours against another in-process channel
	forHandlers                            // connect-go in-process against connect-go over a socket
	batchItems                             // many items a message against one
	pickBetweenProcesses                   // shm: against grpc-go over a socket, between processes
	socketsWithoutTCP                      // sockets, without localhost to compare them with
	socketsVersusTCP                       // each socket against localhost
	floorInProcess                         // inproc's default against the floor
	floorBetweenProcesses                  // shm: against a floor between two processes
)

// A choice is one finding of the verdict before it is worded: its
// situation and the measurements it rests on. Conclude's paragraph, the
// page's finding and the terminal's line are all written from it, so that
// they say the same.
type choice struct {
	situation situation
	// comparisons are the pick's against its reference; the sockets
	// have one each.
	comparisons []comparison
	// impls are what a choice without comparisons names: the sockets
	// with no localhost.
	impls []string
	// batches are the batching choice's pairs of groups.
	batches []batchPair
}

// choices are the findings Conclude words, in its order.
func (r *Report) choices() []choice {
	var cs []choice
	def, modes := r.ranOf(kindDefault), r.ranOf(kindMode)
	ref := r.Baseline
	if k := kindOf(ref); k == kindDefault || k == kindMode {
		ref = ""
		if tcp := r.ranOf(kindTCP); len(tcp) > 0 {
			ref = tcp[0]
		}
	}
	switch {
	case len(def) > 0:
		cs = append(cs, choice{situation: pickInProcess, comparisons: []comparison{r.compare(def, ref)}})
		if len(modes) > 0 {
			cs = append(cs, choice{situation: modesInProcess, comparisons: []comparison{r.compare(modes, def[0])}})
		}
	case len(modes) > 0:
		cs = append(cs, choice{situation: modesOnlyInProcess, comparisons: []comparison{r.compare(modes, ref)}})
	default:
		cs = append(cs, choice{situation: noInProcess})
	}
	for _, rival := range r.ranOf(kindRival) {
		var ours []string
		for _, impl := range infoOf(rival).versus {
			if r.ran(impl) {
				ours = append(ours, impl)
			}
		}
		if len(ours) > 0 {
			cs = append(cs, choice{situation: versusRival, comparisons: []comparison{r.compare(ours, rival)}})
		}
	}
	for _, impl := range r.ranOf(kindHTTP) {
		for _, ref := range infoOf(impl).versus {
			if r.ran(ref) {
				cs = append(cs, choice{situation: forHandlers, comparisons: []comparison{r.compare([]string{impl}, ref)}})
			}
		}
	}
	if pairs := r.batchPairs(); len(pairs) > 0 {
		cs = append(cs, choice{situation: batchItems, batches: pairs})
	}
	if shm, sockets := r.ranOf(kindXproc), r.ranOf(kindXprocSocket); len(shm) > 0 && len(sockets) > 0 {
		cs = append(cs, choice{situation: pickBetweenProcesses, comparisons: []comparison{r.compare(shm, sockets[0])}})
	}
	if sockets := r.ranOf(kindSocket); len(sockets) > 0 {
		tcp := r.ranOf(kindTCP)
		if len(tcp) == 0 {
			cs = append(cs, choice{situation: socketsWithoutTCP, impls: sockets})
		} else {
			c := choice{situation: socketsVersusTCP}
			for _, s := range sockets {
				c.comparisons = append(c.comparisons, r.compare([]string{s}, tcp[0]))
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// floorChoices are the findings LeftToGain words, in its order.
func (r *Report) floorChoices() []choice {
	var cs []choice
	if def, floor := r.ranOf(kindDefault), r.ranOf(kindFloor); len(def) > 0 && len(floor) > 0 {
		cs = append(cs, choice{situation: floorInProcess, comparisons: []comparison{r.compare(def, floor[0])}})
	}
	if shm := r.ranOf(kindXproc); len(shm) > 0 {
		for _, floor := range r.ranOf(kindXprocFloor) {
			cs = append(cs, choice{situation: floorBetweenProcesses, comparisons: []comparison{r.compare(shm, floor)}})
		}
	}
	return cs
}

// paragraph is c worded for Conclude or LeftToGain: a sentence or two,
// with each workload's figure.
func (c choice) paragraph() string { return c.item().text() }

// item is c worded: a sentence or two, with each workload's figure.
func (c choice) item() verdictItem {
	var w wording
	var cmp comparison
	if len(c.comparisons) > 0 {
		cmp = c.comparisons[0]
	}
	switch c.situation {
	case pickInProcess:
		w.plain("For calls within one process, pick " + cmp.cands[0] + ", inproc's default ")
		w.aside("Clone copies every message, Isolated runs each handler on its own goroutine: safe for any handler")
		w.plain(": it ")
		cmp.predicate(&w)
	case modesInProcess:
		w.plain("Where their rules hold ")
		w.aside("see the inproc docs")
		w.plain(", inproc's other modes can go further: the fastest of those run ")
		w.aside(strings.Join(cmp.cands, ", "))
		w.plain(" ")
		cmp.predicate(&w)
	case modesOnlyInProcess:
		w.plain("This run has no " + defaultImpl() + ", so it says nothing of inproc's default; the fastest of the modes it ran ")
		w.aside(strings.Join(cmp.cands, ", "))
		w.plain(", which need their rules to hold ")
		w.aside("see the inproc docs")
		w.plain(", ")
		cmp.predicate(&w)
	case noInProcess:
		w.plain("This run has no inproc impl, so it says nothing of calls within one process")
	case versusRival:
		if len(cmp.cands) == 1 {
			w.plain("Against another in-process channel, " + cmp.cands[0] + " ")
		} else {
			w.plain("Against another in-process channel, the fastest of " + strings.Join(cmp.cands, " and ") + " ")
		}
		cmp.predicate(&w)
	case forHandlers:
		w.plain("For connect-go's handlers, or any other http.Handler, ")
		w.describe(cmp.cands[0])
		w.plain(" ")
		cmp.predicate(&w)
	case batchItems:
		w.plain("Batching: ")
		for i, b := range c.batches {
			if i > 0 {
				w.plain("; ")
			}
			b.clause(&w)
		}
		w.plain(" in this run ")
		w.aside("package batch does it for any stream")
	case pickBetweenProcesses:
		w.plain("Between processes on one machine, pick ")
		w.describe(cmp.cands[0])
		w.plain(": it ")
		cmp.predicate(&w)
	case socketsWithoutTCP:
		w.plain("Across processes, this run has no TCP ")
		w.aside("localhost")
		w.plain(" to compare " + strings.Join(c.impls, " and ") + " with")
	case socketsVersusTCP:
		w.plain("Across processes, ")
		for i, s := range c.comparisons {
			if i > 0 {
				w.sep("; ")
			}
			w.plain(s.cands[0] + " ")
			s.predicate(&w)
		}
	case floorInProcess:
		w.plain("What is left to gain: " + cmp.cands[0] + " ")
		cmp.predicate(&w)
	case floorBetweenProcesses:
		w.plain("Against the machine's floor between two processes, " + cmp.cands[0] + " ")
		cmp.predicate(&w)
	default:
		panic(fmt.Sprintf("a choice of unknown situation %d", c.situation))
	}
	return w.done(".")
}

// defaultImpl is the name of the default inproc impl.
func defaultImpl() string {
	for _, k := range implKinds {
		if k.kind == kindDefault {
			return k.name
		}
	}
	panic("no default impl in implKinds")
}

// ranOf returns the impls of kind k that r measured, in the table's order.
func (r *Report) ranOf(k implKind) []string {
	var names []string
	for _, ik := range implKinds {
		if ik.kind == k && r.ran(ik.name) {
			names = append(names, ik.name)
		}
	}
	return names
}

// ran says whether any group of r has the impl.
func (r *Report) ran(impl string) bool {
	for _, g := range r.Groups {
		if _, ok := g.row(impl); ok {
			return true
		}
	}
	return false
}

// row is g's row of impl.
func (g Group) row(impl string) (Row, bool) {
	i := slices.IndexFunc(g.Rows, func(r Row) bool { return r.Impl == impl })
	if i < 0 {
		return Row{}, false
	}
	return g.Rows[i], true
}

// A finding is how the fastest of some candidate impls compares with a
// reference impl in one group.
type finding struct {
	label       string  // the group, for people
	impl        string  // the candidate
	speedup     float64 // the reference's median over the candidate's: above 1, the candidate is faster
	significant bool
	// tested says whether the two rows have runs enough for a U test to
	// find any difference at all: without, "not significant" would claim
	// what the run could not test.
	tested bool
	runs   int // the fewer runs of the two rows
}

// findings compares, in every group that has ref and any of cands, the
// fastest of cands with ref.
func (r *Report) findings(cands []string, ref string) []finding {
	var fs []finding
	for _, g := range r.Groups {
		refRow, ok := g.row(ref)
		if !ok {
			continue
		}
		// Rows are fastest first, so the first candidate is the fastest.
		i := slices.IndexFunc(g.Rows, func(row Row) bool { return slices.Contains(cands, row.Impl) })
		if i < 0 || g.Rows[i].Impl == ref {
			continue
		}
		c := g.Rows[i]
		tested := canDiffer(c.Runs, refRow.Runs)
		fs = append(fs, finding{
			label:       r.label(g),
			impl:        c.Impl,
			speedup:     refRow.Time.Median / c.Time.Median,
			significant: tested && significant(c, refRow),
			tested:      tested,
			runs:        min(c.Runs, refRow.Runs),
		})
	}
	return fs
}

// significant says whether a Mann-Whitney U test tells a and b apart:
// the report's own test where one of them is the baseline, the same test
// on their runs otherwise.
func significant(a, b Row) bool {
	switch {
	case b.IsBaseline:
		return a.Significant
	case a.IsBaseline:
		return b.Significant
	}
	return timesDiffer(a, b)
}

// label is g's name in a verdict: "ListStrings respSize=10", with its
// GOMAXPROCS when the report has several.
func (r *Report) label(g Group) string {
	l := g.Workload
	if g.Params != "" {
		l += " " + strings.ReplaceAll(g.Params, "/", " ")
	}
	for _, o := range r.Groups {
		if o.GOMAXPROCS != g.GOMAXPROCS {
			return l + " GOMAXPROCS " + strconv.Itoa(g.GOMAXPROCS)
		}
	}
	return l
}

// A comparison is how the fastest of some candidate impls compares with
// a reference impl, in each group that has both.
type comparison struct {
	cands []string
	// ref is "" where the run has no reference to compare with.
	ref      string
	findings []finding
}

// compare compares, in every group that has ref and any of cands, the
// fastest of cands with ref.
func (r *Report) compare(cands []string, ref string) comparison {
	c := comparison{cands: cands, ref: ref}
	if ref != "" {
		c.findings = r.findings(cands, ref)
	}
	return c
}

// split parts c's findings into the significant, those a U test could
// not tell apart, and those with too few runs for one.
func (c comparison) split() (significant, noDiff, untested []finding) {
	for _, f := range c.findings {
		switch {
		case !f.tested:
			untested = append(untested, f)
		case f.significant:
			significant = append(significant, f)
		default:
			noDiff = append(noDiff, f)
		}
	}
	return significant, noDiff, untested
}

// speedups are the factors of the significant findings fs, the faster
// apart from the slower, each at least 1.
func speedups(fs []finding) (faster, slower []float64) {
	for _, f := range fs {
		if f.speedup >= 1 {
			faster = append(faster, f.speedup)
		} else {
			slower = append(slower, 1/f.speedup)
		}
	}
	return faster, slower
}

// predicate words the predicate of a sentence whose subject is c's
// candidates, on how the fastest of them compares with the reference in
// each group: "is 5.8–36× faster than localhost (grpc-go over TCP) in
// this run (ListStrings respSize=1: 5.8×, ...)". Each group's figure
// names its impl when there are several candidates. Groups with too few
// runs for a U test are neither a difference nor its absence: the
// predicate says it cannot tell, and gives their medians' ratios marked
// untested.
func (c comparison) predicate(w *wording) {
	if c.ref == "" {
		w.plain("cannot be compared: this run has no baseline outside inproc")
		return
	}
	if len(c.findings) == 0 {
		w.plain("cannot be compared: this run has no ")
		w.describe(c.ref)
		w.plain(" in the same workloads")
		return
	}
	significant, noDiffs, untested := c.split()
	if len(significant)+len(noDiffs) == 0 {
		w.plain("was not tested against ")
		w.describe(c.ref)
		w.plain(": ")
		cannotTell(w, untested, len(c.cands) > 1)
		return
	}
	faster, slower := speedups(significant)
	switch {
	case len(significant) == 0:
		w.plain("shows no significant difference from ")
		w.describe(c.ref)
	case len(slower) == 0:
		w.plain("is ")
		w.figure(span(faster) + " faster")
		w.plain(" than ")
		w.describe(c.ref)
	case len(faster) == 0:
		w.plain("is ")
		w.figure(span(slower) + " slower")
		w.plain(" than ")
		w.describe(c.ref)
	default:
		workloads := "workloads"
		if len(faster) == 1 {
			workloads = "workload"
		}
		w.plain("is faster than ")
		w.describe(c.ref)
		w.plain(fmt.Sprintf(" in %d %s ", len(faster), workloads))
		w.aside(span(faster))
		w.plain(fmt.Sprintf(" and slower in %d ", len(slower)))
		w.aside(span(slower))
	}
	// The figures, then the groups without one: "ListStrings respSize=10:
	// 7.6×, Unary: 24×; no significant difference in PingPong".
	var figures []workloadFigure
	for _, f := range significant {
		v := ""
		if len(c.cands) > 1 {
			v = f.impl + " "
		}
		switch {
		case len(faster) == 0 || len(slower) == 0: // the head says which way
			v += formatTimes(max(f.speedup, 1/f.speedup))
		case f.speedup >= 1:
			v += formatTimes(f.speedup) + " faster"
		default:
			v += formatTimes(1/f.speedup) + " slower"
		}
		figures = append(figures, workloadFigure{f.label, v})
	}
	for _, f := range noDiffs {
		figures = append(figures, workloadFigure{Label: f.label})
	}
	w.plain(" in this run")
	w.figures(figures)
	if len(untested) > 0 {
		labels := make([]string, len(untested))
		for i, f := range untested {
			labels[i] = f.label
		}
		w.plain(fmt.Sprintf(", and was not tested in %s: ", strings.Join(shorten(labels), ", ")))
		cannotTell(w, untested, len(c.cands) > 1)
	}
}

// cannotTell words that the findings fs had too few runs for a U test,
// how many they had and need, and what their medians alone say, marked
// untested: "the verdict cannot tell with 3 runs; 4 or more are needed for a
// significant difference (untested medians in this run: Unary 25×
// faster)". With impls, each figure names its impl.
func cannotTell(w *wording, fs []finding, impls bool) {
	lo, hi := fs[0].runs, fs[0].runs
	labels := make([]string, len(fs))
	for i, f := range fs {
		lo, hi = min(lo, f.runs), max(hi, f.runs)
		labels[i] = f.label
	}
	labels = shorten(labels)
	figures := make([]string, len(fs))
	for i, f := range fs {
		d := labels[i] + " "
		if impls {
			d += f.impl + " "
		}
		if f.speedup >= 1 {
			d += formatTimes(f.speedup) + " faster"
		} else {
			d += formatTimes(1/f.speedup) + " slower"
		}
		figures[i] = d
	}
	w.plain(fmt.Sprintf("the verdict cannot tell with %s; %d or more are needed for a significant difference ", runsText(lo, hi), UTestRuns()))
	w.aside("untested medians in this run: " + strings.Join(figures, ", "))
}

// runsText is "1 run", "3 runs" or "2–3 runs".
func runsText(lo, hi int) string {
	switch {
	case lo != hi:
		return fmt.Sprintf("%d–%d runs", lo, hi)
	case lo == 1:
		return "1 run"
	}
	return fmt.Sprintf("%d runs", lo)
}

// shorten drops from each label the workload its predecessor already
// named: "ListStrings respSize=1, respSize=10, Unary".
func shorten(labels []string) []string {
	out := make([]string, len(labels))
	prev := ""
	for i, l := range labels {
		workload, rest, _ := strings.Cut(l, " ")
		out[i] = l
		if workload == prev && rest != "" {
			out[i] = rest
		}
		prev = workload
	}
	return out
}

// span is the range of xs, all at least 1: "5.8–36×", or "5.8×" when
// both ends print alike.
func span(xs []float64) string {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if l, h := formatTimes(lo), formatTimes(hi); l != h {
		return strings.TrimSuffix(l, "×") + "–" + h
	}
	return formatTimes(lo)
}

// formatTimes prints a factor of at least 1 with two significant digits,
// or three below 1.1 where two would round a real difference to "1×".
func formatTimes(x float64) string {
	var s string
	switch {
	case x >= 9.95:
		s = strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	case x >= 1.095:
		s = strconv.FormatFloat(x, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return s + "×"
}

// batching is the verdict's paragraph on sending items in batches;
// empty when the run has no groups that differ only in their batch.
func (r *Report) batching() string {
	pairs := r.batchPairs()
	if len(pairs) == 0 {
		return ""
	}
	return choice{situation: batchItems, batches: pairs}.paragraph()
}

// A batchPair is what sending items in batches is worth in one workload
// and GOMAXPROCS: each impl's medians with one item a message over those
// with many, in the two groups that differ only in batch=1 against
// batch=N.
type batchPair struct {
	label string // the group's, without its batch param
	items string // N, the items a message
	// figures are the impls whose two rows differ significantly; same,
	// those whose rows do not.
	figures []batchFigure
	same    []string
	// untested are the impls whose rows have too few runs for a U test,
	// of lo to hi runs.
	untested []batchFigure
	lo, hi   int
}

// A batchFigure is one impl's ratio of its median with one item a
// message to its median with many: above 1, batching is faster.
type batchFigure struct {
	impl  string
	ratio float64
}

// String is the figure as the verdict gives it: "unix 3.4×".
func (f batchFigure) String() string { return f.impl + " " + f.times() }

// times is the ratio as the verdict gives it: "3.4×".
func (f batchFigure) times() string { return fmt.Sprintf("%.2g×", f.ratio) }

// batchPairs are the pairs of groups of one workload and GOMAXPROCS that
// differ only in batch=1 against batch=N (N > 1), with what batching is
// worth over TCP, the sockets and inproc's default.
func (r *Report) batchPairs() []batchPair {
	var pairs []batchPair
	for _, one := range r.Groups {
		if one.Params != "batch=1" {
			continue
		}
		for _, many := range r.Groups {
			if many.Workload != one.Workload || many.GOMAXPROCS != one.GOMAXPROCS ||
				!strings.HasPrefix(many.Params, "batch=") || many.Params == one.Params {
				continue
			}
			g := one
			g.Params = ""
			p := batchPair{label: r.label(g), items: strings.TrimPrefix(many.Params, "batch="), lo: math.MaxInt}
			for _, k := range implKinds {
				if k.kind != kindTCP && k.kind != kindSocket && k.kind != kindDefault {
					continue
				}
				a, okA := one.row(k.name)
				b, okB := many.row(k.name)
				if !okA || !okB {
					continue
				}
				f := batchFigure{k.name, a.Time.Median / b.Time.Median}
				switch {
				case !canDiffer(a.Runs, b.Runs):
					p.untested = append(p.untested, f)
					p.lo, p.hi = min(p.lo, a.Runs, b.Runs), max(p.hi, min(a.Runs, b.Runs))
				case !timesDiffer(a, b):
					p.same = append(p.same, k.name)
				default:
					p.figures = append(p.figures, f)
				}
			}
			if len(p.figures)+len(p.same)+len(p.untested) > 0 {
				pairs = append(pairs, p)
			}
		}
	}
	return pairs
}

// clause words p as the verdict's paragraph says it: "sending 64 items
// a message instead of one (Batching) makes unix 3.4× as fast", marked
// untested where the rows have too few runs for a U test.
func (p batchPair) clause(w *wording) {
	w.plain("sending " + p.items + " items a message instead of one ")
	w.aside(p.label)
	if len(p.figures) > 0 {
		w.plain(" makes ")
		for i, f := range p.figures {
			if i > 0 {
				w.plain(", ")
			}
			w.plain(f.impl + " ")
			w.figure(f.times())
		}
		w.plain(" as fast")
	}
	if len(p.same) > 0 {
		if len(p.figures) > 0 {
			w.plain(" and")
		}
		w.plain(" makes no significant difference to " + strings.Join(p.same, ", "))
	}
	if len(p.untested) > 0 {
		if len(p.figures)+len(p.same) > 0 {
			w.plain(", and")
		}
		w.plain(fmt.Sprintf(" was not tested: the verdict cannot tell with %s; %d or more are needed for a significant difference ",
			runsText(p.lo, p.hi), UTestRuns()))
		w.aside("untested medians: " + joinFigures(p.untested) + " as fast")
	}
}

// joinFigures is "localhost 3.7×, unix 3.4×".
func joinFigures(fs []batchFigure) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = f.String()
	}
	return strings.Join(s, ", ")
}

// timesDiffer says whether a Mann-Whitney U test tells the runs of a and b
// apart, whatever group each is of.
func timesDiffer(a, b Row) bool {
	if len(a.times) == 0 || len(b.times) == 0 {
		return false
	}
	thresholds := benchmath.DefaultThresholds
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(a.times, &thresholds), benchmath.NewSample(b.times, &thresholds))
	return c.P < c.Alpha
}

// The fewest runs the statistics need, found by asking benchmath itself
// rather than copying its tables, so that the verdict and the CLI's check
// agree with the figures Build computes (and with benchstat's "need >= N
// samples").

// runsLimit bounds the searches below: a confidence that needs more runs
// than this is as good as one no run count reaches.
const runsLimit = 1000

// UTestRuns is the fewest runs of each of two rows with which benchmath's
// Mann-Whitney U test can find a difference at its alpha (0.05, the
// tables' ~): 4. With fewer, no data at all is significant, so "no
// significant difference" would say nothing.
func UTestRuns() int {
	for n := 1; n <= runsLimit; n++ {
		if canDiffer(n, n) {
			return n
		}
	}
	return runsLimit + 1
}

// canDiffer says whether rows of n1 and n2 runs can differ significantly:
// whether the U test finds two samples of those sizes that do not overlap
// at all significant.
func canDiffer(n1, n2 int) bool {
	if n1 < 1 || n2 < 1 {
		return false
	}
	a, b := make([]float64, n1), make([]float64, n2)
	for i := range a {
		a[i] = float64(i)
	}
	for i := range b {
		b[i] = float64(n1 + i)
	}
	thresholds := benchmath.DefaultThresholds
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(a, &thresholds), benchmath.NewSample(b, &thresholds))
	return c.P < c.Alpha
}

// IntervalRuns is the fewest runs whose median has a bounded confidence
// interval at level confidence, in (0, 1): 5 at 0.9, 6 at 0.95, 8 at
// 0.99. With fewer, the tables print ±∞. Above runsLimit it is runsLimit+1.
func IntervalRuns(confidence float64) int {
	thresholds := benchmath.DefaultThresholds
	for n := 2; n <= runsLimit; n++ {
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = float64(i)
		}
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &thresholds), confidence)
		if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) {
			return n
		}
	}
	return runsLimit + 1
}
