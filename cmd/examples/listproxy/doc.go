// Package listproxy is the proxy of "Optimizing in-process gRPC with Go
// 1.23 Iterators and Coroutines" (Płotka and Petkovski, 2025,
// https://www.bwplotka.dev/2025/go-grpc-inprocess-iter/, section
// "Transparent, in-process gRPC calls"): a ListStrings service that hides
// many ListStrings backends and answers as one, built on package [fanout].
// Its backends may be in the same process, behind a unix or abstract
// socket, on TCP or behind any grpc-go target, and one [Server] registers
// on a [localgrpc.Server] like any service, so it is itself served on every
// kind of address.
//
// # What a client gets
//
// Each backend streams its strings sorted. The proxy streams the sorted,
// deduplicated union of them: every string any backend sent, once, in
// order.
//
// A ListResponse carries several strings, and each backend batches as it
// likes, so a message is not an item: merging messages by their first
// string, and dropping equal messages, would leave disorder and
// duplicates inside batches. The proxy therefore merges strings. The call
// it opens on a backend yields that backend's strings one at a time (the
// strings of a message in order, then the next message's; empty messages
// yield nothing), so fanout's sorted merge, a loser tree over the
// backends, sees strings, and puts equal ones next to each other, where
// the proxy drops all but the first. (It does so itself rather than with
// [fanout.WithDedup], which keeps a run's item until the merge yields a
// different one, since it may fold the run: a string would wait for the
// next.) The merged strings are packed again
// into responses of at most 64 strings and 1 MiB of string bytes
// ([WithBatchLimits] sets both), a response being sent as soon as it is
// full or the stream ends. A string goes out only once every backend has
// a string at least as large, or has ended, as in any sorted merge; so a
// slow backend holds the whole stream back (fanout's timeouts, through
// [WithFanoutOptions], bound that).
//
// A backend that breaks the order, sending a string smaller than the one
// before it, fails at that string with codes.Internal, as if its call had
// ended there: the output stays sorted whatever the backends send.
//
// # When a backend fails
//
// With [fanout.Warn], the default, the proxy goes on with the other
// backends: the client gets every string they have, and the failed
// backends' strings from before their failure, then the call ends with a
// status whose code is the first failed backend's (Unavailable for a
// backend that is down, DeadlineExceeded for one fanout's timeouts gave up
// on, Internal for one out of order) and whose message names every failed
// backend with its status. A ListResponse has no field for warnings, as
// Thanos's responses have, and ending with OK would let a client take a
// partial list for the whole one; a status after the data tells it what
// it got. With [fanout.Abort] the call ends at the first failure, with the
// same status.
//
// A client that cancels its call ends every backend call of it: the proxy
// returns at once, and no goroutine of the call outlives it.
//
// Run it, from the repository's root: go test -v ./cmd/examples/listproxy
// (as root, its tests also put backends in network namespaces).
package listproxy
