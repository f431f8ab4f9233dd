package bookstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/batch"
	"github.com/localgrpc/localgrpc/cmd/examples/bookstore"
	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
)

// One server lists Charles Dickens's books one per message and in
// batches; the client reads the batches book by book with batch.Items.
func Example() {
	lib := bookstore.Article()
	srv := localgrpc.NewServer()
	bookstorev1.RegisterBookStoreServer(srv, &bookstore.PerMessage{Library: lib})
	bookstorev1.RegisterBookStoreBatchServer(srv, &bookstore.SenderBatched{Library: lib, BatchSize: 64})
	if err := srv.Listen("inproc:bookstore-example"); err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		stop()
		<-served
	}()
	cc, err := localgrpc.NewClient("inproc:bookstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	req := &bookstorev1.ListBooksRequest{Author: bookstore.CharlesDickens}

	one, err := bookstorev1.NewBookStoreClient(cc).ListBooks(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	messages := 0
	for _, err := one.Recv(); err == nil; _, err = one.Recv() {
		messages++
	}
	fmt.Println("one per message:", messages, "messages")

	batches, err := bookstorev1.NewBookStoreBatchClient(cc).ListBooks(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	books := 0
	for b, err := range batch.Items(batches, (*bookstorev1.ListBooksResponse).GetBooks) {
		if err != nil {
			log.Fatal(err)
		}
		if books == 0 {
			fmt.Println("first:", b.GetTitle())
		}
		books++
	}
	fmt.Println("in batches of 64:", books, "books")
	// Output:
	// one per message: 89 messages
	// first: Echoes of Silence, book 12
	// in batches of 64: 89 books
}
