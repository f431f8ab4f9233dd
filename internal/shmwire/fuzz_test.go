package shmwire

import (
	"bytes"
	"reflect"
	"testing"

	"google.golang.org/grpc/metadata"
)

// FuzzReadFrames feeds a peer's arbitrary bytes to the reader and every
// payload parser: none may panic, and what parses re-encodes to itself.
func FuzzReadFrames(f *testing.F) {
	var seed []byte
	seed = AppendFrame(seed, 1, Headers, 0, (&Request{Method: "/a/b", Timeout: 5, MD: metadata.Pairs("k", "v")}).Append(nil))
	seed = AppendFrame(seed, 1, Message, More, []byte("hello"))
	seed = AppendFrame(seed, 1, Headers, 0, AppendMD(nil, metadata.Pairs("x-bin", "\x00")))
	seed = AppendFrame(seed, 1, Trailers, 0, (&Status{Code: 5, Message: "m", Details: []byte{1}}).Append(nil))
	seed = AppendFrame(seed, 1, Cancel, 0, AppendCode(nil, 1))
	seed = AppendFrame(seed, 0, Window, 0, AppendWindow(nil, 100))
	seed = AppendFrame(seed, 0, GoAway, 0, (&Away{Last: 3, Reason: "bye"}).Append(nil))
	f.Add(seed)
	f.Add([]byte{0, 0, 0, 5, 0, 0, 0, 1, 1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b), 4096)
		for {
			h, p, _, err := r.ReadFrame()
			if err != nil {
				return
			}
			if int(h.Length) != len(p) {
				t.Fatalf("%+v with %d bytes", h, len(p))
			}
			switch h.Type {
			case Headers:
				if req, err := ParseRequest(p); err == nil {
					again, err := ParseRequest(req.Append(nil))
					if err != nil || !sameRequest(again, req) {
						t.Fatalf("request %+v re-parsed as %+v, %v", req, again, err)
					}
				}
				if md, err := ParseMD(p); err == nil {
					if again, err := ParseMD(AppendMD(nil, md)); err != nil || !sameMD(again, md) {
						t.Fatalf("md %v re-parsed as %v, %v", md, again, err)
					}
				}
			case Trailers:
				if st, err := ParseStatus(p); err == nil {
					again, err := ParseStatus(st.Append(nil))
					if err != nil || again.Code != st.Code || again.Message != st.Message || !bytes.Equal(again.Details, st.Details) || !sameMD(again.MD, st.MD) {
						t.Fatalf("status %+v re-parsed as %+v, %v", st, again, err)
					}
				}
			case Cancel:
				ParseCode(p)
			case Window:
				ParseWindow(p)
			case GoAway:
				ParseAway(p)
			}
		}
	})
}

func FuzzReadHello(f *testing.F) {
	var b bytes.Buffer
	WriteHello(&b, Hello{Version: 1, MaxFrame: 1 << 20, Window: 1 << 16, ConnWin: 1 << 20})
	f.Add(b.Bytes())
	f.Add([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	f.Fuzz(func(t *testing.T, p []byte) {
		h, err := ReadHello(bytes.NewReader(p))
		if err != nil {
			return
		}
		var again bytes.Buffer
		WriteHello(&again, h)
		if h2, err := ReadHello(&again); err != nil || h2 != h {
			t.Fatalf("hello %+v re-read as %+v, %v", h, h2, err)
		}
	})
}

func sameRequest(a, b Request) bool {
	return a.Method == b.Method && a.Unary == b.Unary && a.Timeout == b.Timeout && a.Subtype == b.Subtype && sameMD(a.MD, b.MD)
}

// sameMD compares metadata as parsed: nil and empty are the same.
func sameMD(a, b metadata.MD) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}
