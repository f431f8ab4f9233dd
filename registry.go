package localgrpc

import "sync"

// inprocNames maps the names of inproc: addresses being served in this
// process to their servers, for NewClient.
var inprocNames = struct {
	sync.Mutex
	m map[string]*Server
}{m: map[string]*Server{}}

func claimInproc(a Address, s *Server) error {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	if _, taken := inprocNames.m[a.Name]; taken {
		return addressError(a.String(), "the in-process name %q is already served in this process", a.Name)
	}
	inprocNames.m[a.Name] = s
	return nil
}

func releaseInproc(name string, s *Server) {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	if inprocNames.m[name] == s {
		delete(inprocNames.m, name)
	}
}

func lookupInproc(name string) *Server {
	inprocNames.Lock()
	defer inprocNames.Unlock()
	return inprocNames.m[name]
}
