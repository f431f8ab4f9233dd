package bench

// Config sizes the workloads. Zero fields take the defaults, so Config{}
// is the suite of DESIGN.md.
type Config struct {
	// Strings is how many strings one ListStrings call returns.
	// The default is 10,000.
	Strings int
	// StringSize is the length of each of those strings in bytes.
	// The default is 100.
	StringSize int
	// Callers is how many goroutines make calls at once: one op is
	// Callers concurrent calls (or rounds), and sub-benchmark names gain
	// "callers=N" when it is above 1. The default is 1.
	Callers int
}

// withDefaults returns c with its zero fields set to the defaults.
func (c Config) withDefaults() Config {
	if c.Strings <= 0 {
		c.Strings = 10_000
	}
	if c.StringSize <= 0 {
		c.StringSize = 100
	}
	if c.Callers <= 0 {
		c.Callers = 1
	}
	return c
}
