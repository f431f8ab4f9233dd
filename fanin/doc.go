// Package fanin merges many channels or sequences into one: unordered, as
// items arrive (Merge for channels, MergeSeq for iter.Seq2 sources), and
// ordered, as a stable k-way merge of sorted sources on a loser tree
// (MergeSorted), with Dedup to fold the adjacent duplicates a merge of
// replicas produces.
//
// Merge is built to be as fast as the best of the usual ways to merge
// channels at every number of inputs without spinning. One or two inputs get
// a goroutine each. Beyond that, one goroutine watches each group of four
// inputs in a select, and when a group turns out to be busy it is handed to
// one sweeper goroutine that takes from every busy input in turn without
// blocking, yielding the processor between sweeps so the senders can run. A
// group that stays empty goes back to its watcher. Only the sweeper waits for
// room in the output: a watcher that finds it full hands its group over with
// the value in hand, so when the consumer falls behind (bursty inputs) one
// goroutine waits on the output, not every watcher whose group got busy.
// The benchmark in this package compares it with the four ways the fan-in
// comparison of the x-dvr dev blog
// (https://x-dvr.github.io/dev-blog/posts/compare-fan-in) measures (a
// goroutine per input, reflect.Select, groups of four in one select, a
// polling loop), in time and in CPU time per op.
//
// The sequence merges report a source's error as a *SourceError that names
// the source, and let the caller choose: break out of the loop to stop at
// the first error, or go on to read the other sources.
package fanin
