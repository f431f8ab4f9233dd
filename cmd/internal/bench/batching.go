package bench

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/localgrpc/localgrpc/batch"
	"github.com/localgrpc/localgrpc/cmd/examples/bookstore"
	"github.com/localgrpc/localgrpc/echo"
	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	"google.golang.org/grpc"
)

// batchSizes are the books per message Batching compares: one, the
// article's BookStore, and 64, Thanos's batch size, which package batch
// sends.
var batchSizes = []int{1, 64}

// batchingCase is Batching: one op is one ListBooks call for an author of
// Config.Strings books, read book by book until the stream ends,
// made by one of Config.Callers callers. With size 1 the server is the article's
// BookStore; otherwise its BookStoreBatch, batching with package batch.
func batchingCase(cfg Config, size int, im impl) func(b *testing.B) error {
	return func(b *testing.B) error {
		if im.serve == nil {
			return fmt.Errorf("%s: %s", im.name, noBooks)
		}
		lib := bookstore.NewLibrary(cfg.Strings, cfg.Strings) // all by one author
		ctx, cancel := context.WithCancel(context.Background())
		b.Cleanup(cancel)
		srv := servers{list: &listServer{}, echo: echo.Server{}, more: func(r grpc.ServiceRegistrar) {
			bookstorev1.RegisterBookStoreServer(r, &bookstore.PerMessage{Library: lib})
			bookstorev1.RegisterBookStoreBatchServer(r, &bookstore.SenderBatched{Library: lib, BatchSize: size})
		}}
		cc, err := im.serve(b, srv)
		if err != nil {
			return fmt.Errorf("%s: %w", im.name, err)
		}
		req := &bookstorev1.ListBooksRequest{Author: bookstore.CharlesDickens}
		list := func() (int, error) { return listOneByOne(ctx, bookstorev1.NewBookStoreClient(cc), req) }
		if size > 1 {
			list = func() (int, error) { return listBatched(ctx, bookstorev1.NewBookStoreBatchClient(cc), req) }
		}
		return timed(b, counting(cfg.Callers, cfg.Strings, "books", list))
	}
}

// listOneByOne makes one BookStore call and counts the books it receives.
func listOneByOne(ctx context.Context, c bookstorev1.BookStoreClient, req *bookstorev1.ListBooksRequest) (int, error) {
	stream, err := c.ListBooks(ctx, req)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		_, err := stream.Recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// listBatched makes one BookStoreBatch call and counts the books of its
// batches, read one by one as batch.Items gives them.
func listBatched(ctx context.Context, c bookstorev1.BookStoreBatchClient, req *bookstorev1.ListBooksRequest) (int, error) {
	stream, err := c.ListBooks(ctx, req)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, err := range batch.Items(stream, (*bookstorev1.ListBooksResponse).GetBooks) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
