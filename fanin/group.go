package fanin

// groupSize is how many inputs one watcher of Merge waits on in one select.
// A select's cases are fixed at compile time (reflect.Select allocates on
// every call), and its cost grows with them: four measured best here, small
// enough for a quiet input to be cheap to wake for and few enough goroutines
// at 1,000 inputs.
const groupSize = 4

// group is a watcher's inputs, and the value its watcher took but found no
// room for in the output. Its watcher or, while the group is busy, the
// sweeper owns it; the handoffs over the busy and back channels order their
// accesses.
type group[T any] struct {
	ins     [groupSize]<-chan T // nil once closed, and past the inputs given
	open    int                 // inputs not yet closed
	idle    int                 // sweeps in a row that found the group empty
	pending T                   // a value taken but not yet put in the output
	held    bool                // pending holds a value
	back    chan struct{}       // the sweeper gives the group back to its watcher
}

// wait blocks until one of the group's inputs has a value or is closed, and
// returns its index, or -1 when done is closed first.
func (g *group[T]) wait(done <-chan struct{}) (int, T, bool) {
	c := &g.ins
	select {
	case v, ok := <-c[0]:
		return 0, v, ok
	case v, ok := <-c[1]:
		return 1, v, ok
	case v, ok := <-c[2]:
		return 2, v, ok
	case v, ok := <-c[3]:
		return 3, v, ok
	case <-done:
		var zero T
		return -1, zero, false
	}
}

// drop forgets a closed input.
func (g *group[T]) drop(i int) {
	g.ins[i] = nil
	g.open--
}

// tryRecv receives from c if a value or the close is ready, without blocking.
func tryRecv[T any](c <-chan T) (v T, ok, ready bool) {
	select {
	case v, ok = <-c:
		return v, ok, true
	default:
		return v, false, false
	}
}
