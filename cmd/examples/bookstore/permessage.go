package bookstore

import (
	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	"google.golang.org/grpc"
)

// PerMessage is the article's BookStore: it sends an author's books one
// per message.
type PerMessage struct {
	bookstorev1.UnimplementedBookStoreServer
	Library Library
}

// ListBooks sends every book of the request's author, one per message.
func (s *PerMessage) ListBooks(req *bookstorev1.ListBooksRequest, stream grpc.ServerStreamingServer[bookstorev1.Book]) error {
	for i := range s.Library {
		if s.Library[i].Author != req.GetAuthor() {
			continue
		}
		if err := stream.Send(s.Library[i].Proto()); err != nil {
			return err
		}
	}
	return nil
}
