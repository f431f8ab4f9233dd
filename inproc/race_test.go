package inproc_test

import (
	"context"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc/codes"
)

// TestContextEndsDuringNewStream ends the client's context at the moment
// the stream is being set up, by another goroutine or by a deadline of a
// few microseconds, many times over, in every mode: each call must end
// with Canceled or DeadlineExceeded, or succeed if it won the race, and
// never crash (an Inline stream once panicked when the context ended
// before its coroutine existed).
func TestContextEndsDuringNewStream(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		_, ch := newEcho(t, m, &funcEcho{})
		for i := range rounds {
			var ctx context.Context
			var cancel context.CancelFunc
			if i%2 == 0 {
				ctx, cancel = context.WithCancel(t.Context())
				go cancel()
			} else {
				ctx, cancel = context.WithTimeout(t.Context(), time.Duration(1+i%7)*time.Microsecond)
			}
			err := callOnce(ctx, ch, &echov1.Echo_ServiceDesc.Streams[2], echov1.Echo_Update_FullMethodName)
			cancel()
			if err != nil {
				wantCode(t, "a call whose context ended as it began", err, codes.Canceled, codes.DeadlineExceeded)
			}
		}
	})
}
