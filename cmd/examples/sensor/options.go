package sensor

import (
	"fmt"
	"time"
)

// Defaults of a Server's batching.
const (
	// DefaultMaxItems is how many values a message holds at most.
	DefaultMaxItems = 64
	// DefaultMaxAge is how long a value waits at most for others to share
	// its message.
	DefaultMaxAge = 10 * time.Millisecond
)

// An Option configures a Server.
type Option func(*config)

type config struct {
	maxItems int
	maxAge   time.Duration
	batched  bool
}

// Batching sends watched values in WatchResponse.values, up to maxItems to
// a message, none waiting longer than maxAge (0: until maxItems values or
// an answer come). The default is DefaultMaxItems and DefaultMaxAge.
func Batching(maxItems int, maxAge time.Duration) Option {
	return func(c *config) { c.maxItems, c.maxAge, c.batched = maxItems, maxAge, true }
}

// OnePerMessage sends each watched value in a message of its own, in
// WatchResponse's sensor_id, timestamp and value, as the article does.
func OnePerMessage() Option {
	return func(c *config) { c.maxItems, c.maxAge, c.batched = 1, 0, false }
}

func newConfig(opts []Option) config {
	c := config{maxItems: DefaultMaxItems, maxAge: DefaultMaxAge, batched: true}
	for _, o := range opts {
		o(&c)
	}
	if c.maxItems < 1 || c.maxAge < 0 {
		panic(fmt.Sprintf("sensor: Batching(%d, %v): a message holds at least one value, and waits no negative time", c.maxItems, c.maxAge))
	}
	return c
}
