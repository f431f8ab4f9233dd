package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRunServesREST starts the command as its doc comment says, on a
// port of the kernel's choosing, makes the doc comment's two curl calls
// through net/http, and stops it as SIGINT would.
func TestRunServesREST(t *testing.T) {
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	stdoutR, stdoutW := io.Pipe()
	var stderr strings.Builder
	exit := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"-http", "127.0.0.1:0", "-grpc", "unix:@localgrpc-gateway-test-" + t.Name()}, stdoutW, &stderr)
		stdoutW.Close()
		exit <- code
	}()
	lines := bufio.NewScanner(stdoutR)
	if !lines.Scan() {
		t.Fatalf("the command printed nothing; exit status %d; stderr:\n%s", <-exit, stderr.String())
	}
	base, ok := strings.CutPrefix(lines.Text(), "serving REST on ")
	if !ok {
		t.Fatalf("the command printed %q, not where it serves", lines.Text())
	}
	go io.Copy(io.Discard, stdoutR) // the rest, until the command ends

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(base+"/v1/greet", "application/json", strings.NewReader(`{"name": "Ada"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Ada") {
		t.Errorf("POST /v1/greet: %s, %q, %v", resp.Status, body, err)
	}

	resp, err = client.Get(base + "/v1/names/Ada/greetings?count=3")
	if err != nil {
		t.Fatal(err)
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(strings.TrimSpace(string(body)), "\n") + 1; err != nil || resp.StatusCode != http.StatusOK || n != 3 {
		t.Errorf("GET /v1/names/Ada/greetings?count=3: %s, %d lines, %v:\n%s", resp.Status, n, err, body)
	}

	interrupt()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit status %d after an interrupt, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the command did not stop after an interrupt")
	}
}

// TestRunRefusesBadCommandLines: a stray argument and a bad -grpc
// address exit with 2 and 1, each naming what is wrong.
func TestRunRefusesBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"127.0.0.1:8080"}, 2, `"127.0.0.1:8080"`},
		{[]string{"-grpc", ""}, 2, "-grpc"},
		{[]string{"-http", "127.0.0.1:0", "-grpc", "nosuchscheme:x"}, 1, "nosuchscheme"},
		{[]string{"-http", "not an address"}, 1, "-http"},
	} {
		var stdout, stderr strings.Builder
		if code := run(t.Context(), tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("gateway %q: exit status %d, stderr %q; want %d and %q in stderr", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
