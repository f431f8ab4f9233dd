package report

import "io"

// errWriter keeps the first error of the writes to w and skips the writes
// after it, so that a writer of many small pieces checks once, at the end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
