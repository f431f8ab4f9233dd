// Package fanout puts one proxy in front of many gRPC backends, in the
// same process or on other processes and machines, through one code path:
// a [Backend] is any [grpc.ClientConnInterface] (an inproc.Channel, a
// localgrpc.NewClient connection to a socket, TCP or a grpc-go target).
//
// A [Proxy] opens one server-streaming call per shard, on one replica of
// it in turn (passing over, for a [WithCooldown] while, a replica that
// failed as an unhealthy server does), and merges the responses: as they come, or in order with
// [WithSortedMerge] (a loser tree, see package fanin) and [WithDedup]. A
// [UnaryProxy] does the same for a unary call and gathers one response
// per shard. A backend that fails is a [*BackendError]: with [Warn] (the
// default) it is yielded and the others go on, with [Abort] it ends the
// stream. [WithFirstResponseTimeout] and [WithIdleTimeout] give up on a
// backend that is slow to answer or goes quiet.
//
// [WithHedging] fights the tail: when a shard's replica is slow to send
// its first response, the same call goes to another replica and the first
// to answer wins, within a budget of extra calls. grpc-go has no hedging
// of its own (its gRFC A6 implementation stops at retries).
//
// Every backend call is counted ([Proxy.Stats]) and can be reported as it
// ends ([WithStatsHandler]): messages, bytes, first-response latency,
// duration, outcome, hedges.
//
// The model is the querier of Thanos, whose ProxyStore does the same for
// its Store API (https://github.com/thanos-io/thanos, pkg/store/proxy.go).
package fanout
