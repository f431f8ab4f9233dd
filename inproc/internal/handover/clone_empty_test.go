package handover

import (
	"sync/atomic"
	"testing"

	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"
)

// TestCloneEmptyComesOutNil: an empty list, bytes or unknown fields, nil
// or not, comes out of a deep copy nil, as from proto.Clone or a socket,
// whether the copy is new or one that held something of each.
func TestCloneEmptyComesOutNil(t *testing.T) {
	type fields struct {
		strings []string
		body    []byte
		books   []*bookstorev1.Book
	}
	for _, empty := range []bool{false, true} {
		list := &listv1.ListResponse{}
		payload := &testgrpc.Payload{Type: testgrpc.PayloadType_COMPRESSABLE}
		books := &bookstorev1.ListBooksResponse{}
		if empty {
			list.Strings, payload.Body, books.Books = []string{}, []byte{}, []*bookstorev1.Book{}
			for _, m := range []proto.Message{list, payload, books} {
				m.ProtoReflect().SetUnknown([]byte{})
			}
		}
		full := []proto.Message{
			&listv1.ListResponse{Strings: []string{"old"}},
			&testgrpc.Payload{Body: []byte("old")},
			&bookstorev1.ListBooksResponse{Books: []*bookstorev1.Book{{Title: "old"}}},
		}
		for i, m := range []proto.Message{list, payload, books} {
			var last atomic.Pointer[strategy]
			if _, err := measure(m, &last); err != nil {
				t.Fatal(err)
			}
			c, ok := cloneKnown(m, &last)
			if !ok {
				t.Fatalf("%T: no clone from the plans", m)
			}
			into := full[i]
			into.ProtoReflect().SetUnknown([]byte{1})
			if !copyKnown(into, m, &last) {
				t.Fatalf("%T: no copy from the plans", m)
			}
			for _, got := range []proto.Message{c.(proto.Message), into} {
				var f fields
				switch got := got.(type) {
				case *listv1.ListResponse:
					f.strings = got.Strings
				case *testgrpc.Payload:
					f.body = got.Body
				case *bookstorev1.ListBooksResponse:
					f.books = got.Books
				}
				if f.strings != nil || f.body != nil || f.books != nil || got.ProtoReflect().GetUnknown() != nil {
					t.Errorf("%T of an empty message (empty, not nil: %v): a field is not nil: %+v, unknown %v", got, empty, f, got.ProtoReflect().GetUnknown())
				}
			}
		}
	}
}
