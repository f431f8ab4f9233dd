package bench

import "strings"

// Config sizes the workloads. Zero fields take the defaults, so Config{}
// is the suite docs/cli.md describes.
type Config struct {
	// Strings is how many strings one ListStrings call returns.
	// The default is 10,000.
	Strings int
	// StringSize is the length of each of those strings in bytes.
	// The default is 100.
	StringSize int
	// TextSize is the length in bytes of the Echo text that Unary sends
	// and PingPong sends each round. The default is 5, a small message.
	TextSize int
	// Callers is how many goroutines make calls at once, each calling
	// again as soon as its call returns; one op is then one call (or
	// round), so time/op is the time per call under that load, and
	// sub-benchmark names gain "callers=N" when it is above 1. The
	// default is 1.
	Callers int
}

// WithDefaults returns c with its zero fields set to the defaults: the
// sizes Cases runs with.
func (c Config) WithDefaults() Config {
	if c.Strings <= 0 {
		c.Strings = 10_000
	}
	if c.StringSize <= 0 {
		c.StringSize = 100
	}
	if c.TextSize <= 0 {
		c.TextSize = 5
	}
	if c.Callers <= 0 {
		c.Callers = 1
	}
	return c
}

// text returns the Echo text of Unary and PingPong: TextSize bytes.
func (c Config) text() string {
	const word = "hello "
	return strings.Repeat(word, c.TextSize/len(word)+1)[:c.TextSize]
}
