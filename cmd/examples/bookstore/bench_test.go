package bookstore_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/examples/bookstore"
	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	"google.golang.org/grpc"
)

// BenchmarkListBooks lists Charles Dickens's books (89 of the article's
// library, 10,000 of the large one) from every server, on both copy modes
// of an in-process channel and on every socket, as the article's
// benchmark does: one op is one ListBooks call read to its end, the books
// gathered in a slice. Besides time and allocations it reports books/s
// and cpu-ns/op, the CPU time of client and server together. The servers of one transport run one after the
// other, so that a noisy machine weighs on those compared alike.
func BenchmarkListBooks(b *testing.B) {
	for _, l := range libraries {
		want := len(l.lib.ByAuthor(bookstore.CharlesDickens))
		conns := make([][]transport, len(stores))
		for i, s := range stores {
			conns[i] = transports(b, benchInprocModes, func(r grpc.ServiceRegistrar) { s.register(r, l.lib) })
		}
		for t := range conns[0] {
			for i, s := range stores {
				tr := conns[i][t]
				b.Run("data="+l.name+"/transport="+tr.name+"/"+s.String(), func(b *testing.B) {
					b.ReportAllocs()
					ctx := context.Background()
					cpu := cpuTime(b)
					for b.Loop() {
						books, err := s.list(ctx, tr.conn, bookstore.CharlesDickens, nil)
						if err != nil {
							b.Fatal(err)
						}
						if len(books) != want {
							b.Fatalf("%d books, want %d", len(books), want)
						}
					}
					b.ReportMetric(float64(want*b.N)/b.Elapsed().Seconds(), "books/s")
					b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// BenchmarkGetBook is the article's first practice: one book found by a
// unary call, and by a server stream of one message read to its end, on
// every transport.
func BenchmarkGetBook(b *testing.B) {
	lib := bookstore.Article()
	title := lib[123].Title
	ts := transports(b, benchInprocModes, func(r grpc.ServiceRegistrar) {
		bookstorev1.RegisterBookLookupServer(r, bookstore.NewLookup(lib))
	})
	for _, tr := range ts {
		c := bookstorev1.NewBookLookupClient(tr.conn)
		req := &bookstorev1.GetBookRequest{Title: title}
		b.Run("transport="+tr.name+"/call=unary", func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := c.GetBook(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run("transport="+tr.name+"/call=stream", func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := getBookStream(context.Background(), c, title); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time the process has used, client and server alike:
// on a machine that other jobs keep busy, a steadier measure of the work
// an op does than its wall time.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
