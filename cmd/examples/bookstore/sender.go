package bookstore

import (
	"github.com/localgrpc/localgrpc/batch"
	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	"google.golang.org/grpc"
)

// SenderBatched is BookStoreBatch on package batch: the batching that
// Batched writes by hand, done by a batch.Sender.
type SenderBatched struct {
	bookstorev1.UnimplementedBookStoreBatchServer
	Library Library
	// BatchSize is how many books a message holds (the last may hold
	// fewer); 0 means ArticleBatchSize.
	BatchSize int
}

// ListBooks sends every book of the request's author, BatchSize to a
// message.
func (s *SenderBatched) ListBooks(req *bookstorev1.ListBooksRequest, stream grpc.ServerStreamingServer[bookstorev1.ListBooksResponse]) error {
	size := batchSize(s.BatchSize)
	out := batch.NewSender(stream.Send, batch.Appender(books, size), batch.MaxItems(size))
	for i := range s.Library {
		if s.Library[i].Author != req.GetAuthor() {
			continue
		}
		if err := out.Add(s.Library[i].Proto()); err != nil {
			return err
		}
	}
	return out.Flush()
}

func books(m *bookstorev1.ListBooksResponse) *[]*bookstorev1.Book { return &m.Books }
