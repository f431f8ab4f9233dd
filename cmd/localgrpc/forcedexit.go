package main

import (
	"sync"
	"time"
)

// atForcedExit is what must be done before a second interrupt ends the
// process at once: serve's stop at once, which closes its listeners and
// removes the socket files it made, as its graceful stop would.
var atForcedExit cleanups

// cleanups are functions to run before a forced exit.
type cleanups struct {
	mu  sync.Mutex
	fns map[*func()]struct{}
}

// add registers fn until the returned function is called.
func (c *cleanups) add(fn func()) (remove func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fns == nil {
		c.fns = make(map[*func()]struct{})
	}
	key := &fn
	c.fns[key] = struct{}{}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.fns, key)
	}
}

// run runs the registered functions at once, and returns when they have
// returned or after limit, whichever is sooner: the exit they come before
// was asked for now.
func (c *cleanups) run(limit time.Duration) {
	c.mu.Lock()
	var wg sync.WaitGroup
	for fn := range c.fns {
		wg.Go(*fn)
	}
	c.mu.Unlock()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// forcedExitLimit bounds the cleanups before a forced exit.
const forcedExitLimit = time.Second
