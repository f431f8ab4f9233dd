package batch

import (
	"io"
	"iter"
)

// A Receiver is the receiving side of a stream of batches:
// grpc.ServerStreamingClient[M], grpc.BidiStreamingClient[Req, M],
// grpc.ClientStreamingServer[M, Resp], and the like.
type Receiver[M any] interface {
	Recv() (*M, error)
}

// Items yields the items of every batch received on stream, in order,
// using items to take them out of a batch. It ends at the stream's end
// (io.EOF), and on any other error, which it yields.
func Items[M, I any](stream Receiver[M], items func(*M) []I) iter.Seq2[I, error] {
	return func(yield func(I, error) bool) {
		for {
			m, err := stream.Recv()
			if err == io.EOF {
				return
			}
			if err != nil {
				var zero I
				yield(zero, err)
				return
			}
			for _, item := range items(m) {
				if !yield(item, nil) {
					return
				}
			}
		}
	}
}
