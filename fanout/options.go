package fanout

import (
	"fmt"
	"time"
)

// An Option configures a Proxy.
type Option func(*config)

type config struct {
	cmp          any // func(a, b *Resp) int
	equal, merge any // func(a, b *Resp) bool, func(kept, next *Resp) *Resp
	partial      PartialResponse
	firstTimeout time.Duration
	idleTimeout  time.Duration
	hedging      *Hedging
	handler      func(CallStats)
	cooldown     time.Duration
}

// DefaultCooldown is how long a replica that failed is passed over, unless
// WithCooldown says otherwise.
const DefaultCooldown = time.Second

// PartialResponse says what a Proxy does when a backend fails.
type PartialResponse uint8

const (
	// Warn yields the backend's *BackendError and goes on with the others.
	Warn PartialResponse = iota
	// Abort yields the backend's *BackendError and ends the stream.
	Abort
)

func (p PartialResponse) String() string {
	switch p {
	case Warn:
		return "warn"
	case Abort:
		return "abort"
	}
	return fmt.Sprintf("PartialResponse(%d)", uint8(p))
}

// WithSortedMerge merges the backends' responses, each backend's sorted by
// cmp, into one sorted stream.
// Equal responses keep the order of their shards.
// Without it, responses come as the backends send them.
// New refuses a cmp whose type is not the proxy's response type's.
//
// The merge places whole responses, so it needs two things:
//   - each backend's responses in cmp's order;
//   - cmp to order them as the keys inside them are ordered.
//
// Responses of one key each do.
// Batched responses of several keys come out sorted only if no two
// backends' batches overlap.
// Compare them by their first keys, and a batch [a c e] merged with [b c d]
// still yields c after e.
// Unbatch such streams first, one key per response, and batch after the
// merge (package batch).
// cmp must also handle an empty response.
func WithSortedMerge[T any](cmp func(a, b *T) int) Option {
	return func(c *config) { c.cmp = cmp }
}

// WithDedup, after a sorted merge, replaces each run of adjacent equal
// responses by one.
// The one kept is the first, or what merge folds the run into when merge is
// not nil.
// merge gets the response kept so far and the next of the run.
// It returns the one to keep, never nil.
//
// A merge that returns nil ends the stream, under Abort as under Warn.
// The stream ends with an Internal error naming the method the proxy serves
// (grpc.Method of Stream's context).
// Ending it beats losing the run without a word.
// It also beats yielding a nil response, which a handler would send as an
// empty message.
//
// New refuses WithDedup without WithSortedMerge.
// It refuses functions whose types are not the proxy's response type's.
func WithDedup[T any](equal func(a, b *T) bool, merge func(kept, next *T) *T) Option {
	return func(c *config) {
		// Both of one call, so that merge is of equal's type: a nil merge
		// stays an untyped nil.
		c.equal, c.merge = equal, nil
		if merge != nil {
			c.merge = merge
		}
	}
}

// WithPartialResponse sets what a backend's failure does: Warn (the
// default) or Abort.
func WithPartialResponse(p PartialResponse) Option {
	return func(c *config) { c.partial = p }
}

// WithFirstResponseTimeout gives up on a shard that has not sent its first
// response within d, hedges included.
// Its calls are then cancelled and it fails with DeadlineExceeded.
// Zero, the default, waits as long as the caller's context allows.
func WithFirstResponseTimeout(d time.Duration) Option {
	return func(c *config) { c.firstTimeout = d }
}

// WithIdleTimeout gives up on a backend that sends nothing for d after a
// response.
// Its call is then cancelled and it fails with DeadlineExceeded.
// Zero, the default, waits as long as the caller's context allows.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) { c.idleTimeout = d }
}

// WithHedging hedges every shard of more than one replica.
// The policy's delay may pass before the call to a replica has produced its
// first response.
// The proxy then starts the same call on the shard's next replica.
// The first to respond wins, and the others are cancelled.
// See [Hedging].
func WithHedging(h Hedging) Option {
	return func(c *config) { c.hedging = &h }
}

// WithStatsHandler calls h when each backend call ends, hedges and
// cancelled calls included.
// h gets what an operator graphs: see [CallStats].
// The option also makes the proxy count the bytes of the responses it
// receives, which costs a walk of each message.
// h runs on the call's goroutine.
// So it must be quick and safe for concurrent use.
func WithStatsHandler(h func(CallStats)) Option {
	return func(c *config) { c.handler = h }
}

// WithCooldown sets how long a replica is passed over after its call failed
// as an unhealthy server fails.
// Those failures are Unavailable, DeadlineExceeded, ResourceExhausted,
// Internal and Unknown.
// The replica is passed over only while its shard has a replica that has
// not failed.
// Without WithCooldown, the while is DefaultCooldown.
// Zero calls replicas strictly in turn.
func WithCooldown(d time.Duration) Option {
	return func(c *config) { c.cooldown = d }
}

// check refuses settings no proxy can run with.
func (c *config) check() error {
	switch {
	case c.partial > Abort:
		return fmt.Errorf("fanout: WithPartialResponse(%v): want Warn or Abort", c.partial)
	case c.firstTimeout < 0:
		return fmt.Errorf("fanout: WithFirstResponseTimeout(%v) is negative", c.firstTimeout)
	case c.idleTimeout < 0:
		return fmt.Errorf("fanout: WithIdleTimeout(%v) is negative", c.idleTimeout)
	case c.cooldown < 0:
		return fmt.Errorf("fanout: WithCooldown(%v) is negative", c.cooldown)
	}
	if c.hedging != nil {
		return c.hedging.check()
	}
	return nil
}
