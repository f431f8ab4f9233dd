package fanout

import (
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Outcome is how a backend call ended.
type Outcome uint8

const (
	// Succeeded: the call ran to its end without an error.
	Succeeded Outcome = iota
	// Failed: the call ended with an error, or a timeout gave up on it.
	Failed
	// Cancelled: the proxy cancelled a call it no longer needed, a hedge
	// that another replica beat, or any call of a stream whose consumer
	// stopped or whose context ended.
	Cancelled
)

func (o Outcome) String() string {
	switch o {
	case Succeeded:
		return "succeeded"
	case Failed:
		return "failed"
	case Cancelled:
		return "cancelled"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// CallStats is one backend call, as WithStatsHandler's function gets it
// when the call ends.
type CallStats struct {
	Backend, Shard string
	// Hedge is whether the call was started as a hedge of a slow one.
	Hedge   bool
	Outcome Outcome
	// Code is the call's status code: OK when it succeeded,
	// DeadlineExceeded when a timeout gave up on it.
	Code codes.Code
	Err  error // nil when it succeeded
	// Messages and Bytes count the responses received; Bytes is their
	// size as protobuf encodes them, zero for responses that are not
	// proto.Message.
	Messages, Bytes int64
	Begin           time.Time
	// FirstResponse is the time from Begin to the first response, zero
	// when there was none.
	FirstResponse time.Duration
	Duration      time.Duration
}

// BackendStats are a backend's totals since its Proxy was made, as Stats
// returns them: counters an operator graphs as rates.
type BackendStats struct {
	Backend, Shard string
	// Calls counts the calls started, hedges included; Hedges counts
	// those started as hedges.
	Calls, Hedges int64
	// Succeeded, Failed and Cancelled count the calls that ended each way;
	// the calls still running are the rest of Calls.
	Succeeded, Failed, Cancelled int64
	// Messages counts the responses received; Bytes their size, counted
	// only with WithStatsHandler.
	Messages, Bytes int64
	// FirstResponses counts the calls that produced a first response, and
	// FirstResponseTime is the sum of their latencies: the mean is the
	// quotient.
	FirstResponses    int64
	FirstResponseTime time.Duration
	// CallTime is the sum of the durations of the calls that ended.
	CallTime time.Duration
}

// A replica is a Backend with its counters.
type replica struct {
	Backend
	calls, hedges                atomic.Int64
	succeeded, failed, cancelled atomic.Int64
	messages, bytes              atomic.Int64
	firstResponses               atomic.Int64
	firstResponseTime, callTime  atomic.Int64 // nanoseconds
	// failedUntil is when the replica's cooldown after a failure ends, in
	// Unix nanoseconds; zero while its calls succeed.
	failedUntil atomic.Int64
}

// coolingAt says whether the replica is cooling down after a failure at
// now, in Unix nanoseconds.
func (r *replica) coolingAt(now int64) bool {
	until := r.failedUntil.Load()
	return until != 0 && until > now
}

// unhealthy says whether a call that failed with code says its server is
// unwell, rather than refusing this request.
func unhealthy(c codes.Code) bool {
	switch c {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

func (r *replica) snapshot() BackendStats {
	// Outcomes before hedges before calls: a call is counted as started
	// before it is counted as a hedge or as ended, so read the other way
	// round a snapshot taken while calls run never ends more than started.
	s := BackendStats{
		Backend:           r.Name,
		Shard:             r.Shard,
		Succeeded:         r.succeeded.Load(),
		Failed:            r.failed.Load(),
		Cancelled:         r.cancelled.Load(),
		Messages:          r.messages.Load(),
		Bytes:             r.bytes.Load(),
		FirstResponses:    r.firstResponses.Load(),
		FirstResponseTime: time.Duration(r.firstResponseTime.Load()),
		CallTime:          time.Duration(r.callTime.Load()),
	}
	s.Hedges = r.hedges.Load()
	s.Calls = r.calls.Load()
	return s
}

// record adds an ended call to the counters, and starts or ends the
// replica's cooldown.
func (r *replica) record(s *CallStats, cooldown time.Duration) {
	switch s.Outcome {
	case Succeeded:
		r.succeeded.Add(1)
		if r.failedUntil.Load() != 0 {
			r.failedUntil.Store(0)
		}
	case Failed:
		r.failed.Add(1)
		if cooldown > 0 && unhealthy(s.Code) {
			r.failedUntil.Store(time.Now().Add(cooldown).UnixNano())
		}
	default:
		r.cancelled.Add(1)
	}
	r.messages.Add(s.Messages)
	r.bytes.Add(s.Bytes)
	if s.FirstResponse > 0 {
		r.firstResponses.Add(1)
		r.firstResponseTime.Add(int64(s.FirstResponse))
	}
	r.callTime.Add(int64(s.Duration))
}

// code is err's status code, as a caller of the backend would see it.
func code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	return status.Code(err)
}
