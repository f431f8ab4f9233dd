package localgrpc_test

// attack8: shm: against grpc-go over a unix socket served by the same
// kind of localgrpc.Server: what a server stream's Recv returns after the
// client's Close (100 small and 3 messages of 300 KB sent), Stop during
// a stream, GracefulStop while a client keeps opening streams.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

func a8Conn(t *testing.T, addr string) localgrpc.ClientConn {
	cc, err := localgrpc.NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// a8Drain reads st to its end: whole messages in order, then the error.
func a8Drain(st grpc.ServerStreamingClient[echov1.EchoResponse], want func(i int) string) (int, bool, error) {
	n, ok := 0, true
	for {
		m, err := st.Recv()
		if err != nil {
			return n, ok, err
		}
		ok = ok && m.Text == want(n)
		n++
	}
}

// The handler sends 100 small messages then 3 of 300 KB; the client has
// read readFirst of them when it closes its connection.
func TestAttack8ShmRecvAfterClose(t *testing.T) {
	big := strings.Repeat("b", 300<<10)
	want := func(i int) string {
		if i < 100 {
			return fmt.Sprint(i)
		}
		return fmt.Sprint(i, big)
	}
	for _, readFirst := range []int{0, 1, 100} {
		t.Run(fmt.Sprint("read", readFirst), func(t *testing.T) {
			a6ShmCompare(t, 3, func(t *testing.T, addr string) string {
				hres := make(chan string, 1)
				a6Server(t, addr, &a5Echo{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					for i := range 103 {
						if err := s.Send(&echov1.EchoResponse{Text: want(i)}); err != nil {
							<-s.Context().Done()
							// Whether a 300 KB Send blocks is the window's
							// (HTTP/2's 64 KiB vs shm's 1 MiB ring): not compared.
							t.Logf("handler Send %d failed (%v)", i, status.Code(err))
							hres <- fmt.Sprintf("handler ctx %v", s.Context().Err())
							return err
						}
					}
					<-s.Context().Done()
					t.Logf("handler sent all 103")
					hres <- fmt.Sprintf("handler ctx %v", s.Context().Err())
					return nil
				}})
				cc := a8Conn(t, addr)
				st, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					return a6Err(err)
				}
				for i := range readFirst {
					if m, err := st.Recv(); err != nil || m.Text != want(i) {
						return fmt.Sprintf("pre-read %d: %v", i, err)
					}
				}
				time.Sleep(100 * time.Millisecond)
				cc.Close()
				h := receiveOr(hres, "handler still running 3s after Close")
				n, ok, rerr := a8Drain(st, func(i int) string { return want(i + readFirst) })
				t.Logf("%s: read %d more after Close", addr[:4], n)
				_, again := st.Recv()
				return fmt.Sprintf("whole in order %v, then %s, again %s; %s", ok, a6Err(rerr), a6Err(again), h)
			})
		})
	}
}

// Stop while the client waits in Recv on a server stream, and while the
// handler blocks in Send of a 300 KB message.
func TestAttack8ShmStopDuringStream(t *testing.T) {
	big := strings.Repeat("b", 300<<10)
	for _, mode := range []string{"idle", "blocked-send"} {
		t.Run(mode, func(t *testing.T) {
			a6ShmCompare(t, 3, func(t *testing.T, addr string) string {
				started, hres := make(chan struct{}), make(chan string, 1)
				srv, served := a6Server(t, addr, &a5Echo{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					s.Send(&echov1.EchoResponse{Text: "first"})
					close(started)
					if mode == "idle" {
						<-s.Context().Done()
						hres <- "ctx " + fmt.Sprint(s.Context().Err())
						return nil
					}
					for i := 0; ; i++ {
						if err := s.Send(&echov1.EchoResponse{Text: big}); err != nil {
							hres <- fmt.Sprintf("Send failed (%v) ctx %v", status.Code(err), s.Context().Err())
							return err
						}
					}
				}})
				cc := a8Conn(t, addr)
				st, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					return a6Err(err)
				}
				m, err := st.Recv()
				if err != nil || m.Text != "first" {
					return "first: " + a6Err(err)
				}
				<-started
				time.Sleep(50 * time.Millisecond)
				stopDone := make(chan struct{})
				go func() { srv.Stop(); close(stopDone) }()
				out := a7Wait(stopDone, "Stop")
				h := receiveOr(hres, "handler still running 3s after Stop")
				var rerr error
				n := 0
				for {
					m, err := st.Recv()
					if err != nil {
						rerr = err
						break
					}
					if m.Text != big {
						return "torn message"
					}
					n++
				}
				serr := "Serve did not return"
				select {
				case err := <-served:
					serr = fmt.Sprintf("Serve %v", err)
				case <-time.After(time.Second):
				}
				// A new call on the same connection after Stop.
				_, err = echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{})
				return out + fmt.Sprintf("Recv then %s; handler %s; %s; new call %v", status.Code(rerr), h, serr, status.Code(err))
			})
		})
	}
}

// GracefulStop while a client keeps opening streams (a bidi stream per
// iteration, each one message there and back) and one stream stays open
// until the drain began: GracefulStop returns once the open stream ends;
// every stream opened is served or refused with Unavailable.
func TestAttack8ShmGracefulStopStreamsOpening(t *testing.T) {
	a6ShmCompare(t, 3, func(t *testing.T, addr string) string {
		release := make(chan struct{})
		var held atomic.Bool
		srv, served := a6Server(t, addr, &a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			m, err := s.Recv()
			if err != nil {
				return err
			}
			if m.Text == "hold" {
				held.Store(true)
				<-release
			}
			return s.Send(&echov1.EchoResponse{Text: m.Text})
		}})
		cc := a8Conn(t, addr)
		c := echov1.NewEchoClient(cc)
		ctx := timeoutCtx(t)
		hold, err := c.Update(ctx)
		if err != nil {
			return a6Err(err)
		}
		hold.Send(&echov1.EchoRequest{Text: "hold"})
		for !held.Load() {
			time.Sleep(time.Millisecond)
		}
		var mu sync.Mutex
		codes := map[string]int{}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					st, err := c.Update(cctx)
					if err == nil {
						err = st.Send(&echov1.EchoRequest{Text: "x"})
						if err == nil {
							_, err = st.Recv()
						} else {
							_, err = st.Recv()
						}
					}
					cancel()
					mu.Lock()
					codes[status.Code(err).String()]++
					mu.Unlock()
				}
			}()
		}
		time.Sleep(30 * time.Millisecond)
		gsDone := make(chan struct{})
		go func() { srv.GracefulStop(); close(gsDone) }()
		time.Sleep(100 * time.Millisecond)
		early := "GracefulStop waits for the held stream"
		select {
		case <-gsDone:
			early = "GracefulStop returned with a stream open"
		default:
		}
		close(release)
		m, herr := hold.Recv()
		out := early + "; " + a7Wait(gsDone, "GracefulStop")
		time.Sleep(50 * time.Millisecond)
		close(stop)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		kinds := []string{}
		for k := range codes {
			if k != "OK" && k != "Unavailable" {
				kinds = append(kinds, k)
			}
		}
		t.Logf("%s codes %v", addr[:4], codes)
		serr := "Serve did not return"
		select {
		case err := <-served:
			serr = fmt.Sprintf("Serve %v", err)
		case <-time.After(time.Second):
		}
		text := ""
		if m != nil {
			text = m.Text
		}
		return out + fmt.Sprintf("held %q %v; other codes %v, unavailable seen %v; %s", text, status.Code(herr), kinds, codes["Unavailable"] > 0, serr)
	})
}
