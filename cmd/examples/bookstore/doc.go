// Package bookstore is the book store of the dev.to article "gRPC
// Streaming the Right Way", served over localgrpc: an author's books
// listed one per message ([PerMessage], the article's BookStore) or in
// batches, written by hand as the article writes them ([Batched]) or with
// package batch ([SenderBatched]); and [Lookup], which finds one book by a
// unary call and by a server stream of one message, the two shapes the
// article's first practice compares.
//
// The data is generated, in the article's shape ([Article]: 1,000 books by
// a dozen authors, 89 of them Charles Dickens's) and bigger ([Large]:
// 10,000 books by Charles Dickens among 20,000). The package's benchmarks
// measure every server on every kind of address, and the unary call
// against the stream of one.
//
// Run it, from the repository's root: go test -v ./cmd/examples/bookstore;
// measure it: go test -bench . ./cmd/examples/bookstore.
package bookstore
