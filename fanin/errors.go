package fanin

import "fmt"

// SourceError is an error that one of the merged sequences yielded.
// It holds the index of that sequence among the arguments of MergeSeq or
// MergeSorted, so the caller can tell which source failed.
// Use errors.As to get it.
// It unwraps to the source's own error.
//
// A merged sequence yields a SourceError in place of an item and goes on:
//   - A loop that breaks on it stops the merge, and every source, at the
//     first error.
//   - A loop that continues reads the other sources to the end.
type SourceError struct {
	Source int
	Err    error
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("fanin: source %d: %v", e.Source, e.Err)
}

func (e *SourceError) Unwrap() error { return e.Err }

// sourceError wraps a source's error, if it is one, with the source's index.
func sourceError(source int, err error) error {
	if err == nil {
		return nil
	}
	return &SourceError{Source: source, Err: err}
}
