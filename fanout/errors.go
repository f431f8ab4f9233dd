package fanout

import "fmt"

// A BackendError is a backend's failure: the status its call ended with,
// or why the proxy gave up on it.
type BackendError struct {
	Backend string // the Backend's Name
	Shard   string
	Err     error
}

func (e *BackendError) Error() string {
	return fmt.Sprintf("fanout: backend %q (shard %q): %v", e.Backend, e.Shard, e.Err)
}

func (e *BackendError) Unwrap() error { return e.Err }
