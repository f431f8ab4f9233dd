package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/connectserve"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/echoconnect"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// addressKinds names the three kinds of address servers listen on, in the
// order startServe is given them.
var addressKinds = []string{"tcp", "unix", "abstract"}

// serveEverywhere starts `localgrpc serve --stack stack` on a TCP port, a
// unix socket file and an abstract socket, and returns the addresses by
// kind.
func serveEverywhere(t *testing.T, stack string) map[string]string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "echo.sock")
	addrs, _, _ := startServe(t, 3, "--stack", stack, "127.0.0.1:0", "unix:"+sock, "unix:@localgrpc-test-"+rand.Text())
	byKind := make(map[string]string)
	for i, k := range addressKinds {
		byKind[k] = addrs[i]
	}
	return byKind
}

// TestCallMatrix calls every method with every client stack on both
// servers over every address kind, and checks the exact output: the
// responses as protojson lines, or, for a pair that cannot work, the
// error that says why, at once.
func TestCallMatrix(t *testing.T) {
	const text = "hello big world"
	want := map[echoclient.Method]string{
		echoclient.Get:     `{"text":"hello big world"}` + "\n",
		echoclient.Expand:  `{"text":"hello"}` + "\n" + `{"text":"big"}` + "\n" + `{"text":"world"}` + "\n",
		echoclient.Collect: `{"text":"hello big world hello big world"}` + "\n",
		echoclient.Update:  strings.Repeat(`{"text":"hello big world"}`+"\n", 2),
	}
	for _, server := range []string{stackGRPC, stackConnect} {
		addrs := serveEverywhere(t, server)
		for _, kind := range addressKinds {
			addr := addrs[kind]
			for _, client := range echoclient.Stacks {
				supported := server == stackConnect || client == echoclient.GRPC || client == echoclient.ConnectGRPC
				for _, m := range echoclient.Methods {
					t.Run(fmt.Sprintf("server=%s/client=%s/address=%s/method=%s", server, client, kind, m), func(t *testing.T) {
						t.Parallel()
						args := []string{"call", string(m), "--address", addr, "--stack", client, "-m", text, "--timeout", "10s"}
						if m.ClientStreams() {
							args = append(args, "--count", "2")
						}
						code, stdout, stderr := runCLI(t.Context(), args...)
						wantCode, wantOut, wantErr := exitOK, want[m], ""
						if !supported {
							wantCode, wantOut = exitFailure, ""
							wantErr = fmt.Sprintf("localgrpc: --stack %s: the server at %s speaks only the gRPC protocol (a grpc-go server): call it with --stack grpc or connect-grpc\n", client, addr)
						}
						if code != wantCode || stdout != wantOut || stderr != wantErr {
							t.Errorf("exit status %d, stdout:\n%s\nstderr:\n%s\nwant %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr, wantCode, wantOut, wantErr)
						}
					})
				}
			}
		}
	}
}

// TestCallData sends requests given with -d: from standard input as they
// come, from a file, and as written.
func TestCallData(t *testing.T) {
	addr := serveEverywhere(t, stackConnect)["abstract"]
	file := filepath.Join(t.TempDir(), "requests.json")
	if err := os.WriteFile(file, []byte("{\"text\": \"from\"}\n{\"text\": \"a file\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"stdin", "{\"text\":\"p\"}\n{\"text\":\"q\"}\n{}", []string{"update", "-d", "-"}, "{\"text\":\"p\"}\n{\"text\":\"q\"}\n{}\n"},
		{"file", "", []string{"collect", "-d", "@" + file, "--stack", echoclient.Connect}, "{\"text\":\"from a file\"}\n"},
		{"literal", "", []string{"expand", "-d", `{"text":"x y"}`, "--stack", echoclient.ConnectGRPCWeb}, "{\"text\":\"x\"}\n{\"text\":\"y\"}\n"},
		{"stdin-one", `{"text":"one"}`, []string{"get", "-d", "-", "--stack", echoclient.ConnectGRPC}, "{\"text\":\"one\"}\n"},
		// -d '' is no requests, as empty standard input is; {} is the empty one.
		{"empty-collect", "", []string{"collect", "-d", ""}, "{}\n"},
		{"empty-update", "", []string{"update", "-d", ""}, ""},
		{"empty-stdin-update", "", []string{"update", "-d", "-"}, ""},
		{"empty-request", "", []string{"get", "-d", "{}"}, "{}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"call", "--address", addr}, tc.args...)
			code, stdout, stderr := runCLIWithInput(t.Context(), strings.NewReader(tc.stdin), args...)
			if code != exitOK || stdout != tc.want || stderr != "" {
				t.Errorf("exit status %d, stdout:\n%s\nstderr:\n%s\nwant stdout:\n%s", code, stdout, stderr, tc.want)
			}
		})
	}
}

// TestCallErrors gives call what a user can get wrong, and a server that
// fails it: each gives a clear error, exit status 2 for the command line
// and the requests, 1 for a call that fails.
func TestCallErrors(t *testing.T) {
	addr := serveEverywhere(t, stackGRPC)["unix"]
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	notJSON := filepath.Join(dir, "text.json")
	if err := os.WriteFile(notJSON, []byte("{}\ntext\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nothing := "unix:@localgrpc-test-nothing-" + rand.Text()
	for _, tc := range []struct {
		args  []string
		stdin string
		code  int
		want  string // the whole first line of stderr, or its start if tail
		// tail: what follows want is another library's words (pflag,
		// encoding/json, protobuf-go, the os), which this test does not
		// hold them to.
		tail bool
		// streams: the requests before the bad one are sent as they are
		// read, and their responses may be printed before the error.
		streams bool
	}{
		{args: []string{"call", "get"}, code: exitUsage, want: "localgrpc: --address is required: unix:PATH, unix:@NAME or HOST:PORT"},
		{args: []string{"call", "--address", addr}, code: exitUsage, want: "localgrpc: call takes one method, get, expand, collect or update; got 0 arguments"},
		{args: []string{"call", "get", "put", "--address", addr}, code: exitUsage, want: "localgrpc: call takes one method, get, expand, collect or update; got 2 arguments"},
		{args: []string{"call", "list", "--address", addr}, code: exitUsage, want: `localgrpc: unknown method "list": the methods are get, expand, collect and update`},
		{args: []string{"call", "get", "--address", "nosuch:x"}, code: exitUsage, want: `localgrpc: --address: address "nosuch:x": port "x" is not a number, and "nosuch" is not a known scheme`},
		{args: []string{"call", "get", "--address", "inproc:echo"}, code: exitUsage, want: "localgrpc: --address inproc:echo: an in-process address names a server in its own process; call runs in a process of its own, so use a socket or TCP address"},
		{args: []string{"call", "get", "--address", addr, "--stack", "http"}, code: exitUsage, want: `localgrpc: --stack "http": the client stacks are grpc, connect, connect-grpc, connect-grpc-web`},
		{args: []string{"call", "collect", "--address", addr, "--count", "0"}, code: exitUsage, want: "localgrpc: --count 0: it must be at least 1"},
		{args: []string{"call", "get", "--address", addr, "--count", "2"}, code: exitUsage, want: "localgrpc: --count: get sends one request; --count is for collect and update"},
		{args: []string{"call", "get", "--address", addr, "-m", "x", "-d", "-"}, code: exitUsage, want: "localgrpc: -d gives the requests: it does not go with -m or --count"},
		{args: []string{"call", "get", "--address", addr, "-m", "\xff"}, code: exitUsage, want: `localgrpc: -m "\xff": the text is not valid UTF-8, as a protobuf string must be`},
		{args: []string{"call", "update", "--address", addr, "-m", "a\xc3", "-n", "2"}, code: exitUsage, want: `localgrpc: -m "a\xc3": the text is not valid UTF-8, as a protobuf string must be`},
		{args: []string{"call", "get", "--address", addr, "-n", "-1"}, code: exitUsage, want: "localgrpc: -n -1: it must be at least 1"},
		{args: []string{"call", "get", "--address", addr, "-n", "0"}, code: exitUsage, want: "localgrpc: -n 0: it must be at least 1"},
		{args: []string{"call", "get", "--address", addr, "-n", "0", "-c", "3"}, code: exitUsage, want: "localgrpc: -n 0: it must be at least 1"},
		{args: []string{"call", "get", "--address", addr, "-n", "0", "--warmup", "1"}, code: exitUsage, want: "localgrpc: -n 0: it must be at least 1"},
		{args: []string{"call", "get", "--address", addr, "-c", "2"}, code: exitUsage, want: "localgrpc: -c and --warmup measure: they go with -n"},
		{args: []string{"call", "get", "--address", addr, "-n", "2", "-c", "3"}, code: exitUsage, want: "localgrpc: -c 3 is more calls at a time than -n 2 calls"},
		{args: []string{"call", "get", "--address", addr, "--timeout", "-1s"}, code: exitUsage, want: "localgrpc: --timeout -1s: it must be 0 (no limit) or more"},
		{args: []string{"call", "get", "--address", addr, "--timeout", "soon"}, code: exitUsage, want: `localgrpc: invalid argument "soon" for "--timeout" flag: `, tail: true},
		{args: []string{"call", "get", "--address", addr, "-d", "@" + missing}, code: exitUsage, want: "localgrpc: -d: open " + missing + ": ", tail: true},
		{args: []string{"call", "get", "--address", addr, "-d", "text"}, code: exitUsage, want: "localgrpc: -d: request 1 is not JSON: ", tail: true},
		{args: []string{"call", "collect", "--address", addr, "-d", "@" + notJSON}, code: exitUsage, want: "localgrpc: " + notJSON + ": request 2 is not JSON: ", tail: true},
		{args: []string{"call", "get", "--address", addr, "-d", `{"txt":"x"}`}, code: exitUsage, want: "localgrpc: -d: request 1 is not an echo.v1.EchoRequest: ", tail: true},
		{args: []string{"call", "get", "--address", addr, "-d", "{\"text\":\"\xff\"}"}, code: exitUsage, want: "localgrpc: -d: request 1 is not an echo.v1.EchoRequest: ", tail: true},
		{args: []string{"call", "get", "--address", addr, "-d", ""}, code: exitUsage, want: "localgrpc: get takes one request, and -d gave none: the empty request is {}"},
		{args: []string{"call", "expand", "--address", addr, "-d", "{} {}"}, code: exitUsage, want: "localgrpc: expand takes one request, and -d gave 2"},
		{args: []string{"call", "get", "--address", addr, "-d", "-"}, stdin: `{"text":"a"} {"text":"b"}`, code: exitUsage, want: "localgrpc: get takes one request, and standard input gave 2"},
		{args: []string{"call", "get", "--address", addr, "-d", "-"}, code: exitUsage, want: "localgrpc: get takes one request, and standard input gave none: the empty request is {}"},
		{args: []string{"call", "get", "--address", addr, "-d", "-", "-n", "2"}, stdin: `{"text":"a"} {"text":"b"}`, code: exitUsage, want: "localgrpc: get takes one request, and standard input gave 2"},
		{args: []string{"call", "expand", "--address", addr, "-d", "", "-n", "2"}, code: exitUsage, want: "localgrpc: expand takes one request, and -d gave none: the empty request is {}"},
		{args: []string{"call", "update", "--address", addr, "-d", "-"}, stdin: "{\"text\":\"a\"}\n{\"text\":1}", code: exitUsage, want: "localgrpc: standard input: request 2 is not an echo.v1.EchoRequest: ", tail: true, streams: true},
		{args: []string{"call", "update", "--address", addr, "-d", "-", "-n", "2"}, stdin: "{\"text\":\"a\"}\n{\"text\":1}", code: exitUsage, want: "localgrpc: standard input: request 2 is not an echo.v1.EchoRequest: ", tail: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLIWithInput(t.Context(), strings.NewReader(tc.stdin), tc.args...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != tc.code || !strings.HasPrefix(first, tc.want) || tc.tail == (first == tc.want) {
				t.Errorf("exit status %d, stderr:\n%s\nwant %d, and a first line %s:\n%s", code, stderr, tc.code, map[bool]string{false: "of", true: "starting with"}[tc.tail], tc.want)
			}
			if stdout != "" && !(tc.streams && stdout == "{\"text\":\"a\"}\n") {
				t.Errorf("stdout: %s", stdout)
			}
		})
	}
	// A call to no server fails with Unavailable on every client: the
	// reason after the code is the stacks' and the system's.
	for _, client := range []string{echoclient.GRPC, echoclient.Connect} {
		t.Run("client="+client+"/no-server", func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), "call", "get", "--address", nothing, "--stack", client)
			callCode, msg, ok := callFailure(stderr, client, nothing)
			if code != exitFailure || stdout != "" || !ok || callCode != codes.Unavailable || msg == "" {
				t.Errorf("exit status %d, stdout %q, stderr:\n%s\nwant %d and an Unavailable call error", code, stdout, stderr, exitFailure)
			}
		})
	}
}

// stalling is an Echo whose Get waits for the end of the call, and whose
// Expand sends the first word and then waits.
type stalling struct{ echo.Server }

func (s stalling) Get(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s stalling) Expand(req *echov1.EchoRequest, stream grpc.ServerStreamingServer[echov1.EchoResponse]) error {
	word, _, _ := strings.Cut(req.GetText(), " ")
	if err := stream.Send(&echov1.EchoResponse{Text: word}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return stream.Context().Err()
}

// stallingConnect is stalling on connect-go.
type stallingConnect struct{ echoconnect.Server }

func (s stallingConnect) Get(ctx context.Context, _ *connect.Request[echov1.EchoRequest]) (*connect.Response[echov1.EchoResponse], error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s stallingConnect) Expand(ctx context.Context, req *connect.Request[echov1.EchoRequest], stream *connect.ServerStream[echov1.EchoResponse]) error {
	word, _, _ := strings.Cut(req.Msg.GetText(), " ")
	if err := stream.Send(&echov1.EchoResponse{Text: word}); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// startStalling serves a stalling Echo on stack at a fresh abstract
// socket, and returns its address and a function that kills it at once,
// closing every connection.
func startStalling(t *testing.T, stack string) (string, func()) {
	t.Helper()
	addr := "unix:@localgrpc-test-" + rand.Text()
	type server interface {
		Listen(addrs ...string) error
		Serve(ctx context.Context) error
	}
	var srv server
	var kill func()
	if stack == stackGRPC {
		s := localgrpc.NewServer()
		echov1.RegisterEchoServer(s, stalling{})
		srv, kill = s, s.Stop
	} else {
		path, h := echov1connect.NewEchoHandler(stallingConnect{})
		s := connectserve.New([]connectserve.Service{{Name: echov1connect.EchoName, Path: path, Handler: h}}, 0o600)
		srv = s
		kill = func() {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // no time for calls in flight: the connections close now
			s.Shutdown(ctx)
		}
	}
	if err := srv.Listen(addr); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	var once bool
	stop := func() {
		if !once {
			once = true
			kill()
			<-served
		}
	}
	t.Cleanup(stop)
	return addr, stop
}

// TestCallServerFails loses the server in the middle of a stream, and
// waits past --timeout for one that does not answer: each call fails with
// the status that says so, having printed what came before.
func TestCallServerFails(t *testing.T) {
	for _, stack := range []string{stackGRPC, stackConnect} {
		client := echoclient.GRPC
		if stack == stackConnect {
			client = echoclient.Connect
		}
		t.Run("server="+stack+"/gone-mid-stream", func(t *testing.T) {
			addr, kill := startStalling(t, stack)
			type result struct {
				code           int
				stdout, stderr string
			}
			stdout := &lineWriter{line: make(chan struct{}, 1)}
			done := make(chan result, 1)
			go func() {
				var stderr strings.Builder
				code := run(t.Context(), []string{"call", "expand", "--address", addr, "--stack", client, "-m", "first second"}, nil, stdout, &stderr)
				done <- result{code, stdout.String(), stderr.String()}
			}()
			select {
			case <-stdout.line:
			case r := <-done:
				t.Fatalf("the call ended before it printed a response: %+v", r)
			case <-time.After(10 * time.Second):
				t.Fatal("no response came")
			}
			kill()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not end when its server went away")
			}
			// grpc-go documents Unavailable for a transport that went away.
			// connect-go's code depends on what it was reading when the
			// connection closed (a cut envelope is InvalidArgument, a reset
			// Internal or Canceled, a GOAWAY Unavailable), so for it the
			// contract is a failure with a code and a reason.
			code, msg, ok := callFailure(r.stderr, client, addr)
			if r.code != exitFailure || r.stdout != "{\"text\":\"first\"}\n" || !ok || msg == "" ||
				stack == stackGRPC && code != codes.Unavailable || code == codes.OK {
				t.Errorf("exit status %d, stdout:\n%s\nstderr:\n%s\nwant %d, the first word, and a call error with a code (Unavailable on grpc-go)", r.code, r.stdout, r.stderr, exitFailure)
			}
		})
		t.Run("server="+stack+"/timeout", func(t *testing.T) {
			addr, _ := startStalling(t, stack)
			start := time.Now()
			code, stdout, stderr := runCLI(t.Context(), "call", "get", "--address", addr, "--stack", client, "--timeout", "200ms")
			took := time.Since(start)
			callCode, _, ok := callFailure(stderr, client, addr)
			if code != exitFailure || stdout != "" || !ok || callCode != codes.DeadlineExceeded {
				t.Errorf("exit status %d, stdout:\n%s\nstderr:\n%s\nwant %d and a DeadlineExceeded call error", code, stdout, stderr, exitFailure)
			}
			// The server ends the call at its copy of the deadline, which
			// connect-go sends in whole milliseconds rounded down: the call
			// can end a little before 200ms as the client measures it. A
			// busy machine can make it end much later.
			if took < 190*time.Millisecond || took > 5*time.Second {
				t.Errorf("a call with --timeout 200ms took %v", took)
			}
		})
	}
}

// callFailure parses stderr of a call that failed, the one line
// "localgrpc: CLIENT to ADDR: CODE: MESSAGE", into its code and message.
// ok is false if stderr is not such a line with a code a status can have.
func callFailure(stderr, client, addr string) (code codes.Code, msg string, ok bool) {
	line, ok := strings.CutSuffix(stderr, "\n")
	if !ok || strings.Contains(line, "\n") {
		return 0, "", false
	}
	rest, ok := strings.CutPrefix(line, fmt.Sprintf("localgrpc: %s to %s: ", client, addr))
	if !ok {
		return 0, "", false
	}
	name, msg, _ := strings.Cut(rest, ": ")
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if c.String() == name {
			return c, msg, true
		}
	}
	return 0, "", false
}

// lineWriter is a lockedBuffer that says on line when a line is written.
type lineWriter struct {
	lockedBuffer
	line chan struct{}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n, err := w.lockedBuffer.Write(p)
	if bytes.IndexByte(p, '\n') >= 0 {
		select {
		case w.line <- struct{}{}:
		default:
		}
	}
	return n, err
}

// TestCallMeasure measures with -n: the report's lines, and the errors by
// status code when calls fail.
func TestCallMeasure(t *testing.T) {
	addr := serveEverywhere(t, stackConnect)["unix"]
	for _, client := range echoclient.Stacks {
		t.Run("client="+client, func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), "call", "update", "--address", addr, "--stack", client, "--count", "3", "-n", "20", "-c", "2", "--warmup", "2")
			if code != exitOK || stderr != "" {
				t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			want := []string{"update over " + client + " to " + addr, "count   20 calls, 2 at a time, in ", "mean    ", "p50     ", "p90     ", "p99     ", "max     ", "errors  0"}
			if len(lines) != len(want) {
				t.Fatalf("output:\n%s\nwant %d lines", stdout, len(want))
			}
			for i, w := range want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d is %q, want it to start %q", i+1, lines[i], w)
				}
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		addr, _ := startStalling(t, stackGRPC)
		code, stdout, stderr := runCLI(t.Context(), "call", "get", "--address", addr, "-n", "3", "-c", "3", "--timeout", "50ms")
		// The message is grpc-go's and depends on which side saw the
		// deadline first (its own context, or the server's RST_STREAM); the
		// code is the contract.
		_, tail, _ := strings.Cut(stdout, "\nerrors  ")
		wantOut := "3\n  DeadlineExceeded   3, the first: "
		if code != exitFailure || !strings.HasPrefix(tail, wantOut) || strings.Count(tail, "\n") != 2 || strings.Contains(stdout, "mean") {
			t.Errorf("exit status %d, stdout:\n%s\nwant %d, no latencies, and errors ending:\n%s<a message>", code, stdout, exitFailure, wantOut)
		}
		if stderr != "localgrpc: 3 of 3 calls failed\n" {
			t.Errorf("stderr: %s", stderr)
		}
	})
}

// TestCallMeasureInterrupted ends -n before any call: the report says no
// calls, at no rate, and the exit status says it was cut short.
func TestCallMeasureInterrupted(t *testing.T) {
	addr := serveEverywhere(t, stackGRPC)["abstract"]
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	code, stdout, stderr := runCLI(ctx, "call", "get", "--address", addr, "-n", "5")
	if code != exitFailure || stderr != "localgrpc: interrupted after 0 of 5 calls\n" {
		t.Errorf("exit status %d, stderr:\n%s", code, stderr)
	}
	if want := "count   0 calls, 1 at a time, in "; !strings.Contains(stdout, want) || !strings.Contains(stdout, "(0 calls/s)\nerrors  0\n") {
		t.Errorf("stdout:\n%s", stdout)
	}
}
