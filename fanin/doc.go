// Package fanin merges many channels or sequences into one.
// It merges in two ways:
//   - Unordered, as items arrive: Merge for channels, MergeSeq for iter.Seq2
//     sources.
//   - Ordered, as a stable k-way merge of sorted sources on a loser tree:
//     MergeSorted.
//
// Dedup folds the adjacent duplicates that a merge of replicas produces.
//
// Merge is built to be as fast as the best of the usual ways to merge
// channels at every number of inputs without spinning:
//   - One or two inputs get a goroutine each.
//   - Beyond that, one goroutine watches each group of four inputs in a
//     select.
//   - A group that turns out to be busy is handed to one sweeper goroutine.
//     The sweeper takes from every busy input in turn without blocking.
//     It yields the processor between sweeps so the senders can run.
//   - A group that stays empty goes back to its watcher.
//   - Only the sweeper waits for room in the output. A watcher that finds
//     the output full hands its group over with the value in hand. So when
//     the consumer falls behind (bursty inputs), one goroutine waits on the
//     output, not every watcher whose group got busy.
//
// The benchmark in this package compares Merge with the four ways that the
// fan-in comparison of the x-dvr dev blog measures, in time and in CPU time
// per op (https://x-dvr.github.io/dev-blog/posts/compare-fan-in):
//   - a goroutine per input,
//   - reflect.Select,
//   - groups of four in one select,
//   - a polling loop.
//
// The sequence merges report a source's error as a *SourceError that names
// the source. The caller chooses what follows: break out of the loop to stop
// at the first error, or go on to read the other sources.
package fanin
