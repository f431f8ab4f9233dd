// Package fanout puts one proxy in front of many gRPC backends through one
// code path.
// The backends may be in the same process or on other processes and
// machines.
// A [Backend] is any [grpc.ClientConnInterface]: an inproc.Channel, or a
// localgrpc.NewClient connection to a socket, TCP or a grpc-go target.
//
// A [Proxy] opens one server-streaming call per shard and merges the
// responses:
//   - It calls one replica of each shard, in turn.
//   - For a [WithCooldown] while, it passes over a replica that failed as an
//     unhealthy server does.
//   - It merges the responses as they come, or in order with
//     [WithSortedMerge] (a loser tree, see package fanin) and [WithDedup].
//
// A [UnaryProxy] does the same for a unary call, and gathers one response
// per shard.
//
// A backend that fails is a [*BackendError]:
//   - With [Warn] (the default), it is yielded and the others go on.
//   - With [Abort], it ends the stream.
//
// [WithFirstResponseTimeout] gives up on a backend that is slow to answer.
// [WithIdleTimeout] gives up on a backend that goes quiet.
//
// [WithHedging] fights the tail.
// When a shard's replica is slow to send its first response, the same call
// goes to another replica, and the first to answer wins.
// Hedges stay within a budget of extra calls.
// grpc-go has no hedging of its own: its gRFC A6 implementation stops at
// retries.
//
// Every backend call is counted ([Proxy.Stats]).
// It can be reported as it ends ([WithStatsHandler]): messages, bytes,
// first-response latency, duration, outcome, hedges.
//
// The model is the querier of Thanos, whose ProxyStore does the same for
// its Store API (https://github.com/thanos-io/thanos, pkg/store/proxy.go).
package fanout
