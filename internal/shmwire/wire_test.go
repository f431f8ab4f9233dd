package shmwire

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

func TestPayloadsRoundTrip(t *testing.T) {
	md := metadata.MD{"a": {"1", "2"}, "b-bin": {"\x00\xff"}, "c": {""}}
	req := Request{Method: "/pkg.Svc/M", Unary: true, Timeout: 1500 * time.Millisecond, Subtype: "json", MD: md}
	got, err := ParseRequest(req.Append(nil))
	if err != nil || !reflect.DeepEqual(got, req) {
		t.Errorf("request: %+v, %v; want %+v", got, err, req)
	}
	gotMD, err := ParseMD(AppendMD(nil, md))
	if err != nil || !reflect.DeepEqual(gotMD, md) {
		t.Errorf("md: %v, %v", gotMD, err)
	}
	if gotMD, err := ParseMD(AppendMD(nil, nil)); err != nil || gotMD != nil {
		t.Errorf("empty md: %v, %v", gotMD, err)
	}
	st := Status{Code: codes.NotFound, Message: "no such thing", Details: []byte{8, 5}, MD: md}
	gotSt, err := ParseStatus(st.Append(nil))
	if err != nil || !reflect.DeepEqual(gotSt, st) {
		t.Errorf("status: %+v, %v", gotSt, err)
	}
	if c, err := ParseCode(AppendCode(nil, codes.DeadlineExceeded)); err != nil || c != codes.DeadlineExceeded {
		t.Errorf("code: %v, %v", c, err)
	}
	if n, err := ParseWindow(AppendWindow(nil, 65535)); err != nil || n != 65535 {
		t.Errorf("window: %v, %v", n, err)
	}
	a := Away{Last: 7, Reason: "stopping"}
	if got, err := ParseAway(a.Append(nil)); err != nil || got != a {
		t.Errorf("away: %+v, %v", got, err)
	}
}

func TestPayloadsRefused(t *testing.T) {
	good := (&Request{Method: "/a/b", MD: metadata.Pairs("k", "v")}).Append(nil)
	for name, p := range map[string][]byte{
		"truncated":        good[:len(good)-1],
		"trailing bytes":   append(append([]byte(nil), good...), 0),
		"huge length":      {0xff, 0xff, 0xff, 0xff, 0x0f},
		"bad varint":       {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"count over bytes": append((&Request{Method: "/a/b"}).Append(nil)[:7], 0xff, 0x01),
		"upper-case key":   (&Request{Method: "/a/b", MD: metadata.MD{"K": {"v"}}}).Append(nil),
		"empty key":        (&Request{Method: "/a/b", MD: metadata.MD{"": {"v"}}}).Append(nil),
		"unknown kind":     {4, '/', 'a', '/', 'b', 2, 0, 0, 0},
		"timeout overflow": {4, '/', 'a', '/', 'b', 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0},
	} {
		if r, err := ParseRequest(p); err == nil {
			t.Errorf("%s: parsed as %+v", name, r)
		}
	}
	if _, err := ParseWindow(AppendWindow(nil, 0)); err == nil {
		t.Error("a window increment of 0 was taken")
	}
	if _, err := ParseWindow([]byte{0x80, 0x80, 0x80, 0x80, 0x08}); err == nil {
		t.Error("a window increment of 2^31 was taken")
	}
}

func TestParseHeaderRefuses(t *testing.T) {
	for name, h := range map[string]Header{
		"unknown type":     {Stream: 1, Type: lastType + 1},
		"type 0":           {Stream: 1},
		"unknown flag":     {Stream: 1, Type: Message, Flags: 0x80},
		"More on headers":  {Stream: 1, Type: Headers, Flags: More},
		"Sized alone":      {Stream: 1, Type: Message, Flags: Sized},
		"Sized on headers": {Stream: 1, Type: Headers, Flags: Sized | More},
		"over the limit":   {Stream: 1, Type: Message, Length: 1025},
		"stream 0 message": {Type: Message},
		"goaway on stream": {Stream: 3, Type: GoAway},
	} {
		if _, err := ParseHeader(h.Append(nil), 1024); err == nil {
			t.Errorf("%s: %+v parsed", name, h)
		}
	}
	ok := Header{Length: 1024, Stream: 1<<32 - 1, Type: Message, Flags: More | End}
	if got, err := ParseHeader(ok.Append(nil), 1024); err != nil || got != ok {
		t.Errorf("%+v: %+v, %v", ok, got, err)
	}
	if _, _, err := ParseSize([]byte{0, 0, 1}); err == nil {
		t.Error("a sized frame of 3 bytes was taken")
	}
	if n, rest, err := ParseSize(AppendSize(nil, 1<<20)); n != 1<<20 || len(rest) != 0 || err != nil {
		t.Errorf("ParseSize(AppendSize(1 MiB)) = %d, %q, %v", n, rest, err)
	}
	if _, err := ParseHeader(make([]byte, HeaderLen-1), 1024); err == nil {
		t.Error("a short header parsed")
	}
}

func TestReaderFrames(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 200<<10)
	var b []byte
	b = AppendFrame(b, 1, Headers, 0, (&Request{Method: "/a/b"}).Append(nil))
	b = AppendFrame(b, 1, Message, More, big)
	b = AppendFrame(b, 1, Message, End, nil)
	b = AppendFrame(b, 0, Window, 0, AppendWindow(nil, 9))
	r := NewReader(bytes.NewReader(b), 1<<20)
	for i, want := range []struct {
		t     Type
		flags uint8
		n     int
	}{{Headers, 0, 9}, {Message, More, len(big)}, {Message, End, 0}, {Window, 0, 1}} {
		h, p, _, err := r.ReadFrame()
		if err != nil || h.Type != want.t || h.Flags != want.flags || len(p) != want.n {
			t.Fatalf("frame %d: %+v, %d bytes, %v; want %v %#x %d bytes", i, h, len(p), err, want.t, want.flags, want.n)
		}
		if want.t == Message && want.n > 0 && !bytes.Equal(p, big) {
			t.Fatalf("frame %d: payload changed", i)
		}
	}
	if _, _, _, err := r.ReadFrame(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
	r = NewReader(bytes.NewReader(b[:len(b)-3]), 1<<20)
	var err error
	for err == nil {
		_, _, _, err = r.ReadFrame()
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a stream cut inside a frame: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestHello(t *testing.T) {
	mine := Hello{Version: Version, Features: FeatureRings, MaxFrame: 1 << 20, Window: 1 << 16, ConnWin: 1 << 20}
	var b bytes.Buffer
	if err := WriteHello(&b, mine); err != nil {
		t.Fatal(err)
	}
	got, err := ReadHello(&b)
	if err != nil || got != mine {
		t.Fatalf("hello: %+v, %v", got, err)
	}
	if v, f := Agree(mine, Hello{Version: 9}); v != 1 || f != 0 {
		t.Errorf("Agree: version %d features %#x", v, f)
	}
	_, err = ReadHello(strings.NewReader("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	if !errors.Is(err, ErrHTTP2) {
		t.Errorf("HTTP/2 preface: %v", err)
	}
	for name, h := range map[string]Hello{
		"version 0":   {MaxFrame: 1 << 20, Window: 1 << 16, ConnWin: 1 << 20},
		"tiny frames": {Version: 1, MaxFrame: 10, Window: 1 << 16, ConnWin: 1 << 20},
		"no window":   {Version: 1, MaxFrame: 1 << 20, ConnWin: 1 << 20},
	} {
		b.Reset()
		WriteHello(&b, h)
		if _, err := ReadHello(&b); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
	if _, err := ReadHello(strings.NewReader("GET / HTTP/1.1\r\n")); err == nil {
		t.Error("HTTP/1 taken as a hello")
	}
}
