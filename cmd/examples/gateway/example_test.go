package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/examples/gateway"
	greeterv1 "github.com/localgrpc/localgrpc/cmd/examples/gateway/gen/greeter/v1"
)

// One Server serves the GreeterService in-process and on a unix socket;
// grpc-gateway's REST front, in the same process, calls it in-process,
// while other processes call it over the socket.
func Example() {
	dir, err := os.MkdirTemp("", "gateway-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := "unix:" + filepath.Join(dir, "greeter.sock")

	srv := localgrpc.NewServer()
	greeterv1.RegisterGreeterServiceServer(srv, gateway.Greeter{})
	if err := srv.Listen("inproc:greeter", sock); err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }() // until stop
	defer func() {
		stop()
		<-served
	}()

	// The gateway's client connection is in-process: no socket, no
	// HTTP/2, no serialization; interceptors, metadata, deadlines and
	// streams as over a socket.
	cc, err := localgrpc.NewClient("inproc:greeter")
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	mux := runtime.NewServeMux()
	if err := greeterv1.RegisterGreeterServiceHandlerClient(ctx, mux, greeterv1.NewGreeterServiceClient(cc)); err != nil {
		log.Fatal(err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(l) // until Close
	defer hs.Close()
	rest := &http.Client{Transport: &http.Transport{}}
	defer rest.CloseIdleConnections()
	base := "http://" + l.Addr().String()

	resp, err := rest.Post(base+"/v1/greet", "application/json", strings.NewReader(`{"name": "Ada"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, "from", resp.Header.Get("Grpc-Metadata-X-Greeter"))
	printJSONLines(resp)

	// A server stream, as newline-delimited JSON.
	resp, err = rest.Get(base + "/v1/names/Grace/greetings?count=2")
	if err != nil {
		log.Fatal(err)
	}
	printJSONLines(resp)

	// The same server, over its socket.
	sockConn, err := localgrpc.NewClient(sock)
	if err != nil {
		log.Fatal(err)
	}
	defer sockConn.Close()
	g, err := greeterv1.NewGreeterServiceClient(sockConn).Greet(ctx, &greeterv1.GreetRequest{Name: "Alan"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.GetGreeting())
	// Output:
	// 200 OK from localgrpc
	// {"greeting":"Hello, Ada!"}
	// {"result":{"number":1,"greeting":"Hello, Grace!"}}
	// {"result":{"number":2,"greeting":"Hello, Grace!"}}
	// Hello, Alan!
}

// printJSONLines prints each line of resp's body without its spaces,
// which protojson varies on purpose from one build to another.
func printJSONLines(resp *http.Response) {
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		var b bytes.Buffer
		if err := json.Compact(&b, lines.Bytes()); err != nil {
			log.Fatal(err)
		}
		fmt.Println(b.String())
	}
	if err := lines.Err(); err != nil {
		log.Fatal(err)
	}
}
