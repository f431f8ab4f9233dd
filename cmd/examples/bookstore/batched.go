package bookstore

import (
	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	"google.golang.org/grpc"
)

// ArticleBatchSize is the article's batch size.
const ArticleBatchSize = 10

// Batched is the article's BookStoreBatch, batching by hand: it sends an
// author's books BatchSize to a message.
type Batched struct {
	bookstorev1.UnimplementedBookStoreBatchServer
	Library Library
	// BatchSize is how many books a message holds (the last may hold
	// fewer); 0 means ArticleBatchSize.
	BatchSize int
}

// ListBooks sends every book of the request's author, BatchSize to a
// message.
func (s *Batched) ListBooks(req *bookstorev1.ListBooksRequest, stream grpc.ServerStreamingServer[bookstorev1.ListBooksResponse]) error {
	size := batchSize(s.BatchSize)
	books := make([]*bookstorev1.Book, 0, size)
	for i := range s.Library {
		if s.Library[i].Author != req.GetAuthor() {
			continue
		}
		books = append(books, s.Library[i].Proto())
		if len(books) == size {
			if err := stream.Send(&bookstorev1.ListBooksResponse{Books: books}); err != nil {
				return err
			}
			// A new slice, where the article reuses books[:0]: grpc-go has
			// encoded a message when Send returns, but an in-process
			// channel that shares messages (inproc.Share) hands the
			// receiver this very slice, which the next batch would
			// overwrite.
			books = make([]*bookstorev1.Book, 0, size)
		}
	}
	if len(books) > 0 {
		// The article returns nil here, losing the last batch's error.
		return stream.Send(&bookstorev1.ListBooksResponse{Books: books})
	}
	return nil
}

func batchSize(n int) int {
	if n == 0 {
		return ArticleBatchSize
	}
	return n
}
