package fanin

const groupSize = 4

type group[T any] struct {
	ins  [groupSize]<-chan T
	open int
	idle int
	back chan struct{}
}

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

func (g *group[T]) drop(i int) {
	g.ins[i] = nil
	g.open--
}

func tryRecv[T any](c <-chan T) (v T, ok, ready bool) {
	select {
	case v, ok = <-c:
		return v, ok, true
	default:
		return v, false, false
	}
}
