package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/internal/callerr"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/load"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
)

// callFlags are the flags of `localgrpc call`.
type callFlags struct {
	address  string
	stack    string
	message  string
	count    int
	data     string
	n        int
	c        int
	warmup   int
	timeout  time.Duration
	compress bool
	security securityFlags

	// Whether -n and -d were given: -n 0 and -d '' are values to check
	// and use, not the defaults.
	measure, hasData bool
}

func newCallCmd() *cobra.Command {
	var f callFlags
	cmd := &cobra.Command{
		Use:   "call get|expand|collect|update --address ADDRESS [flags]",
		Short: "Call the Echo API on any address with grpc-go or connect-go, or measure calls",
		Long: `Call calls a method of the Echo API (echo.v1.Echo) served at --address, a socket or
TCP address (unix:PATH, unix:@NAME, HOST:PORT, here or on another machine),
and prints each response as protojson, one per line, as it arrives:

  get      one request, one response: the text
  expand   one request, a response per space-separated word
  collect  a stream of requests, one response: the texts joined with spaces
  update   a stream of requests, a response per request as it arrives

The requests are -m's text (--count times for collect and update), or the
protojson objects -d gives: -d - reads them from standard input as they come
(update answers each one at once), -d @FILE from a file, -d '{"text":"hi"}' as
written. -d '' gives none, which collect and update send and get and expand,
taking one, refuse; the empty request is -d '{}'.

--stack picks the client: grpc (grpc-go), or connect-go speaking the Connect
(connect), gRPC (connect-grpc) or gRPC-Web (connect-grpc-web) protocol. A
grpc-go server speaks gRPC alone: a connect or connect-grpc-web call to one
fails at once and says so. Compression is off unless --compress.

` + securityHelp + `

With -n, call measures instead of printing: it makes --warmup calls, then n
calls, c at a time, and prints how many, their mean, p50, p90, p99 and max
latency (of the calls that succeeded), and the errors by status code.

The exit status is 1 if a call fails, 2 if the command line or the requests
are wrong.`,
		Example: `  localgrpc call get --address unix:@echo -m 'hello'
  localgrpc call expand --address :8080 --stack connect -m 'a b c'
  echo '{"text":"x"} {"text":"y"}' | localgrpc call update --address unix:/tmp/echo.sock -d -
  localgrpc call update --address unix:@echo --count 3 -n 10000 -c 4
  localgrpc call get --address api.example.com:443 --cacert ca.pem
  localgrpc call get --address 10.0.0.7:8080 --plaintext`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("call takes one method, get, expand, collect or update; got %d arguments", len(args))
			}
			_, err := echoclient.ParseMethod(args[0])
			return err
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, _ := echoclient.ParseMethod(args[0])
			f.measure, f.hasData = cmd.Flags().Changed("calls"), cmd.Flags().Changed("data")
			return f.run(cmd, m)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.address, "address", "", "the server's `address`: unix:PATH, unix:@NAME or HOST:PORT (required)")
	fl.StringVar(&f.stack, "stack", echoclient.GRPC, "the client: "+strings.Join(echoclient.Stacks, ", "))
	fl.StringVarP(&f.message, "message", "m", "hello", "the request's `text`")
	fl.IntVar(&f.count, "count", 1, "send the -m request `k` times (collect and update)")
	fl.StringVarP(&f.data, "data", "d", "", "the requests as protojson: - (standard input), @FILE, or the JSON itself")
	fl.IntVarP(&f.n, "calls", "n", 0, "measure `n` calls instead of printing responses")
	fl.IntVarP(&f.c, "concurrency", "c", 1, "with -n, make `c` calls at a time")
	fl.IntVar(&f.warmup, "warmup", 0, "with -n, make `w` calls first that are not measured")
	fl.DurationVar(&f.timeout, "timeout", 0, "fail a call that takes longer than `d` (0: no limit)")
	fl.BoolVar(&f.compress, "compress", false, "compress requests with gzip and accept gzip responses")
	f.security.add(fl)
	return cmd
}

// check checks the flags that do not depend on one another's values.
func (f *callFlags) check(cmd *cobra.Command, m echoclient.Method) error {
	fl := cmd.Flags()
	if f.address == "" {
		return errors.New("--address is required: unix:PATH, unix:@NAME or HOST:PORT")
	}
	a, err := localgrpc.ParseAddress(f.address)
	if err != nil {
		return fmt.Errorf("--address: %s", withoutPrefix(err))
	}
	if a.Kind == localgrpc.Inproc {
		return fmt.Errorf("--address %s: an in-process address names a server in its own process; call runs in a process of its own, so use a socket or TCP address", f.address)
	}
	if err := f.security.check(); err != nil {
		return err
	}
	switch {
	case !slices.Contains(echoclient.Stacks, f.stack):
		return fmt.Errorf("--stack %q: the client stacks are %s", f.stack, strings.Join(echoclient.Stacks, ", "))
	case f.count < 1:
		return fmt.Errorf("--count %d: it must be at least 1", f.count)
	case fl.Changed("count") && !m.ClientStreams():
		return fmt.Errorf("--count: %s sends one request; --count is for collect and update", m)
	case f.hasData && (fl.Changed("message") || fl.Changed("count")):
		return errors.New("-d gives the requests: it does not go with -m or --count")
	case !utf8.ValidString(f.message):
		return fmt.Errorf("-m %q: the text is not valid UTF-8, as a protobuf string must be", f.message)
	case f.timeout < 0:
		return fmt.Errorf("--timeout %v: it must be 0 (no limit) or more", f.timeout)
	case f.measure:
		return f.load().Check()
	case fl.Changed("concurrency") || fl.Changed("warmup"):
		return errors.New("-c and --warmup measure: they go with -n")
	}
	return nil
}

// load is the measurement -n asks for.
func (f *callFlags) load() load.Spec {
	return load.Spec{N: f.n, C: f.c, Warmup: f.warmup, Timeout: f.timeout}
}

func (f *callFlags) run(cmd *cobra.Command, m echoclient.Method) error {
	if err := f.check(cmd, m); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel() // ends the reader of -d -
	data := dataSource{f.data, cmd.InOrStdin()}
	var next func() (echoclient.Requests, error)
	switch {
	case !f.hasData:
		reqs := echoclient.Repeated(m, f.message, f.count)
		next = func() (echoclient.Requests, error) { return echoclient.List(reqs), nil }
	case f.data == "-" && m.ClientStreams() && !f.measure:
		// Sent as they are read, so that update answers each at once.
		next = func() (echoclient.Requests, error) { return data.stream(ctx) }
	default:
		// Read before any call, so that every call of -n sends them all,
		// and a count get or expand cannot take is refused up front.
		reqs, err := data.readAll()
		if err != nil {
			return err
		}
		if !m.ClientStreams() && len(reqs) != 1 {
			return oneRequestError(m, data.name(), len(reqs))
		}
		next = func() (echoclient.Requests, error) { return echoclient.List(reqs), nil }
	}
	client, err := newEchoClient(f.stack, f.address, f.compress, &f.security)
	if err != nil {
		return err // the flags or their files are wrong: a usage error
	}
	defer client.Close()

	if f.measure {
		l := f.load()
		r := l.Run(ctx, func(ctx context.Context) error {
			reqs, _ := next()
			return client.Call(ctx, m, reqs, func(*echov1.EchoResponse) error { return nil })
		})
		cancelled := r.TakeCancelled(ctx)
		fmt.Fprintf(cmd.OutOrStdout(), "%s over %s to %s\n", m, f.stack, f.address)
		r.Write(cmd.OutOrStdout(), l)
		if cancelled > 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "cancelled %d calls in flight, by the interrupt: neither errors nor counted\n", cancelled)
		}
		if r.Calls < f.n {
			return failure{fmt.Errorf("interrupted after %d of %d calls", r.Calls, f.n)}
		}
		if failed := r.Failed(); failed > 0 {
			return failure{fmt.Errorf("%d of %d calls failed", failed, r.Calls)}
		}
		return nil
	}

	reqs, err := next()
	if err != nil {
		return err
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	out := cmd.OutOrStdout()
	answered := false
	err = client.Call(ctx, m, reqs, func(resp *echov1.EchoResponse) error {
		answered = true
		line, err := responseJSON(resp)
		if err != nil {
			return err
		}
		_, err = out.Write(line)
		return err
	})
	var in echoclient.InputError
	if errors.As(err, &in) {
		return in.Err // the requests are wrong: a usage error
	}
	if err != nil {
		return failure{callError(err, f, answered)}
	}
	return nil
}

// responseJSON is resp as protojson on one line. protojson varies its
// spacing on purpose, so that no one relies on it; compacted, the line is
// the same every time.
func responseJSON(resp *echov1.EchoResponse) ([]byte, error) {
	b, err := protojson.Marshal(resp)
	if err != nil {
		return nil, err
	}
	var line bytes.Buffer
	if err := json.Compact(&line, b); err != nil {
		return nil, err
	}
	line.WriteByte('\n')
	return line.Bytes(), nil
}

// oneRequestError says that m, which takes one request, was given n
// from source.
func oneRequestError(m echoclient.Method, source string, n int) error {
	if n == 0 {
		return fmt.Errorf("%s takes one request, and %s gave none: the empty request is {}", m, source)
	}
	return fmt.Errorf("%s takes one request, and %s gave %d", m, source, n)
}

// callError says what went wrong with a call, and where; answered is
// whether the server sent a response before it.
func callError(err error, f *callFlags, answered bool) error {
	var pe *localgrpc.ProtocolError
	if errors.As(err, &pe) {
		return fmt.Errorf("--stack %s: the server at %s speaks only the gRPC protocol (a grpc-go server): call it with --stack grpc or connect-grpc", f.stack, f.address)
	}
	if a, perr := localgrpc.ParseAddress(f.address); perr == nil && !answered {
		if why, ok := f.security.securityError(err, a); ok {
			return fmt.Errorf("%s to %s: %s (%v: %s)", f.stack, f.address, why, callerr.Code(err), callerr.Message(err))
		}
	}
	if f.compress && strings.Contains(callerr.Message(err), "unknown compression") {
		// A connect server accepts gzip only if it was started with it;
		// its own message lists what it accepts, which is nothing.
		return fmt.Errorf("--compress: the server at %s does not accept gzip: start it with localgrpc serve --compress, or call without --compress (%v: %s)", f.address, callerr.Code(err), callerr.Message(err))
	}
	return fmt.Errorf("%s to %s: %v: %s", f.stack, f.address, callerr.Code(err), callerr.Message(err))
}
