package bookstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/localgrpc/localgrpc/cmd/examples/bookstore"
	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	"google.golang.org/grpc"
)

// A store is one of the package's servers of ListBooks, at one batch size,
// with the client call that lists an author's books from it.
type store struct {
	name  string // its name in subtest names
	batch int    // books per message
	// register registers the server of lib.
	register func(s grpc.ServiceRegistrar, lib bookstore.Library)
	// list lists author's books, and appends the number of books in each
	// message to sizes unless it is nil.
	list func(ctx context.Context, cc grpc.ClientConnInterface, author string, sizes *[]int) ([]*bookstorev1.Book, error)
}

func (s store) String() string { return fmt.Sprintf("server=%s/batch=%d", s.name, s.batch) }

// stores is every server: one book per message, and batches of the
// article's 10 and of 64, by hand and by package batch.
var stores = []store{
	{"per-message", 1, func(s grpc.ServiceRegistrar, lib bookstore.Library) {
		bookstorev1.RegisterBookStoreServer(s, &bookstore.PerMessage{Library: lib})
	}, listOne},
	{"hand", 10, func(s grpc.ServiceRegistrar, lib bookstore.Library) {
		bookstorev1.RegisterBookStoreBatchServer(s, &bookstore.Batched{Library: lib})
	}, listBatched},
	{"sender", 10, func(s grpc.ServiceRegistrar, lib bookstore.Library) {
		bookstorev1.RegisterBookStoreBatchServer(s, &bookstore.SenderBatched{Library: lib})
	}, listBatched},
	{"hand", 64, func(s grpc.ServiceRegistrar, lib bookstore.Library) {
		bookstorev1.RegisterBookStoreBatchServer(s, &bookstore.Batched{Library: lib, BatchSize: 64})
	}, listBatched},
	{"sender", 64, func(s grpc.ServiceRegistrar, lib bookstore.Library) {
		bookstorev1.RegisterBookStoreBatchServer(s, &bookstore.SenderBatched{Library: lib, BatchSize: 64})
	}, listBatched},
}

// listOne lists from a BookStore, as the article's client does, but
// telling the stream's end from its failure.
func listOne(ctx context.Context, cc grpc.ClientConnInterface, author string, sizes *[]int) ([]*bookstorev1.Book, error) {
	stream, err := bookstorev1.NewBookStoreClient(cc).ListBooks(ctx, &bookstorev1.ListBooksRequest{Author: author})
	if err != nil {
		return nil, err
	}
	var books []*bookstorev1.Book
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return books, nil
		}
		if err != nil {
			return nil, err
		}
		books = append(books, b)
		if sizes != nil {
			*sizes = append(*sizes, 1)
		}
	}
}

// listBatched lists from a BookStoreBatch.
func listBatched(ctx context.Context, cc grpc.ClientConnInterface, author string, sizes *[]int) ([]*bookstorev1.Book, error) {
	stream, err := bookstorev1.NewBookStoreBatchClient(cc).ListBooks(ctx, &bookstorev1.ListBooksRequest{Author: author})
	if err != nil {
		return nil, err
	}
	var books []*bookstorev1.Book
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return books, nil
		}
		if err != nil {
			return nil, err
		}
		books = append(books, m.Books...)
		if sizes != nil {
			*sizes = append(*sizes, len(m.Books))
		}
	}
}
