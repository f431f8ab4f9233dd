package localgrpc

import "sync"

// inprocNames maps the names of inproc: addresses being served in this
// process to their servers, for NewClient.
var inprocNames = struct {
	sync.Mutex
	m map[string]*Server
	// claimed is closed, and replaced, whenever a name is claimed: clients
	// that wait for a server to serve their name wait on it.
	claimed chan struct{}
}{m: map[string]*Server{}, claimed: make(chan struct{})}

func claimInproc(a Address, s *Server) error {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	if _, taken := inprocNames.m[a.Name]; taken {
		return addressError(a.String(), "the in-process name %q is already served in this process", a.Name)
	}
	inprocNames.m[a.Name] = s
	close(inprocNames.claimed)
	inprocNames.claimed = make(chan struct{})
	return nil
}

func releaseInproc(name string, s *Server) {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	if inprocNames.m[name] == s {
		delete(inprocNames.m, name)
	}
}

// lookupOrWait is the server of name, or nil and a channel closed once
// some name is claimed.
func lookupOrWait(name string) (*Server, <-chan struct{}) {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	return inprocNames.m[name], inprocNames.claimed
}
