package localgrpc

import (
	"sync"

	"github.com/localgrpc/localgrpc/inproc"
)

// inprocNames maps the names of inproc: addresses being served in this
// process to their channels, for Dial.
var inprocNames = struct {
	sync.Mutex
	m map[string]*inproc.Channel
}{m: map[string]*inproc.Channel{}}

func claimInproc(a Address, ch *inproc.Channel) error {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	if _, taken := inprocNames.m[a.Name]; taken {
		return addressError(a.String(), "the in-process name %q is already served in this process", a.Name)
	}
	inprocNames.m[a.Name] = ch
	return nil
}

func releaseInproc(name string, ch *inproc.Channel) {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	if inprocNames.m[name] == ch {
		delete(inprocNames.m, name)
	}
}

func lookupInproc(name string) *inproc.Channel {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	return inprocNames.m[name]
}
