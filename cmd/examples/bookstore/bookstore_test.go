package bookstore_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/examples/bookstore"
	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// waitLimit bounds every call of these tests, with room for a busy
// machine and the race detector.
const waitLimit = 30 * time.Second

var libraries = []struct {
	name string
	lib  bookstore.Library
}{
	{"article", bookstore.Article()},
	{"large", bookstore.Large()},
}

func TestLibraries(t *testing.T) {
	for _, tc := range []struct {
		lib            bookstore.Library
		total, dickens int
	}{
		{bookstore.Article(), 1000, 89},
		{bookstore.Large(), 20_000, 10_000},
	} {
		if len(tc.lib) != tc.total {
			t.Errorf("%d books, want %d", len(tc.lib), tc.total)
		}
		if n := len(tc.lib.ByAuthor(bookstore.CharlesDickens)); n != tc.dickens {
			t.Errorf("%d books by Charles Dickens, want %d", n, tc.dickens)
		}
		titles := map[string]bool{}
		for _, r := range tc.lib {
			if titles[r.Title] {
				t.Fatalf("title %q twice", r.Title)
			}
			titles[r.Title] = true
		}
	}
	if a, b := bookstore.Article(), bookstore.Article(); !equalBooks(a.ByAuthor(bookstore.CharlesDickens), b.ByAuthor(bookstore.CharlesDickens)) {
		t.Error("two Article libraries differ")
	}
}

// TestListBooks has every server list the books of authors with many, few
// and no books, from both libraries, over every in-process mode and every
// socket: the books must be the library's, in its order, and every message
// but the last must hold exactly the server's batch size.
func TestListBooks(t *testing.T) {
	authors := []string{bookstore.CharlesDickens, "Virginia Woolf", "Nobody"}
	for _, l := range libraries {
		want := map[string][]*bookstorev1.Book{}
		for _, a := range authors {
			want[a] = l.lib.ByAuthor(a)
		}
		for _, s := range stores {
			ts := transports(t, everyInprocMode, func(r grpc.ServiceRegistrar) { s.register(r, l.lib) })
			for _, tr := range ts {
				t.Run("data="+l.name+"/"+s.String()+"/transport="+tr.name, func(t *testing.T) {
					t.Parallel()
					for _, author := range authors {
						ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
						var sizes []int
						books, err := s.list(ctx, tr.conn, author, &sizes)
						cancel()
						if err != nil {
							t.Fatalf("%s: %v", author, err)
						}
						if !equalBooks(books, want[author]) {
							t.Errorf("%s: %d books, not the library's %d in order", author, len(books), len(want[author]))
						}
						for i, n := range sizes {
							if n != s.batch && (i < len(sizes)-1 || n < 1 || n > s.batch) {
								t.Errorf("%s: message %d of %d holds %d books, batch size %d", author, i, len(sizes), n, s.batch)
								break
							}
						}
					}
				})
			}
		}
	}
}

// TestGetBook finds a book by a unary call and by a stream of one, on
// every transport: the same book, and NotFound for a title no book has.
func TestGetBook(t *testing.T) {
	lib := bookstore.Article()
	ts := transports(t, everyInprocMode, func(r grpc.ServiceRegistrar) {
		bookstorev1.RegisterBookLookupServer(r, bookstore.NewLookup(lib))
	})
	want := lib[123].Proto()
	for _, tr := range ts {
		t.Run("transport="+tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
			defer cancel()
			c := bookstorev1.NewBookLookupClient(tr.conn)
			got, err := c.GetBook(ctx, &bookstorev1.GetBookRequest{Title: want.Title})
			if err != nil || !proto.Equal(got, want) {
				t.Errorf("GetBook: %v, %v; want %v", got, err, want)
			}
			got, err = getBookStream(ctx, c, want.Title)
			if err != nil || !proto.Equal(got, want) {
				t.Errorf("GetBookStream: %v, %v; want %v", got, err, want)
			}
			if _, err := c.GetBook(ctx, &bookstorev1.GetBookRequest{Title: "No Such Book"}); status.Code(err) != codes.NotFound {
				t.Errorf("GetBook of no book: %v, want NotFound", err)
			}
			if _, err := getBookStream(ctx, c, "No Such Book"); status.Code(err) != codes.NotFound {
				t.Errorf("GetBookStream of no book: %v, want NotFound", err)
			}
		})
	}
}

// getBookStream is the client of a stream of one: a call, a Recv for the
// book and one more for the stream's end.
func getBookStream(ctx context.Context, c bookstorev1.BookLookupClient, title string) (*bookstorev1.Book, error) {
	stream, err := c.GetBookStream(ctx, &bookstorev1.GetBookRequest{Title: title})
	if err != nil {
		return nil, err
	}
	b, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	switch _, err := stream.Recv(); {
	case err == nil:
		return nil, errors.New("a second book")
	case !errors.Is(err, io.EOF):
		return nil, err
	}
	return b, nil
}

func equalBooks(a, b []*bookstorev1.Book) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
