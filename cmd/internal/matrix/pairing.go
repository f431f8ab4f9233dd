package matrix

import (
	"net/http"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
)

// The server stacks that serve Echo, as serve --stack names them.
const (
	GRPCServer    = "grpc"    // grpc-go
	ConnectServer = "connect" // connect-go
)

// Servers are the server stacks, in the matrix's order.
var Servers = []string{GRPCServer, ConnectServer}

// Kinds are the kinds of address measured, in the matrix's order.
var Kinds = []string{"inproc", "shm", "abstract", "unix", "tcp"}

// kindName is what the matrix calls each kind of address.
var kindName = map[localgrpc.AddressKind]string{localgrpc.Inproc: "inproc", localgrpc.Shm: "shm", localgrpc.Abstract: "abstract", localgrpc.Unix: "unix", localgrpc.TCP: "tcp"}

// KindName is what the matrix calls the kind k, one of [Kinds].
// It is "" for a kind the matrix does not measure.
func KindName(k localgrpc.AddressKind) string { return kindName[k] }

// A Pairing is a row of the matrix.
// It is a client calling a server at an address of a kind, served by the
// process PID.
// For connect-go in-process, Handler is the server's handler, which its
// clients call through inprochttp.
type Pairing struct {
	Server, Client, Kind, Addr string
	PID                        int
	Handler                    http.Handler
}

// ServedAt is where a server serves: its address, and its process's pid.
// In-process, Handler is its handler if it is connect-go's.
type ServedAt struct {
	Addr    string
	PID     int
	Handler http.Handler
}

// Pairings are the rows the servers at addrs allow.
// The map is by server stack, then kind.
func Pairings(addrs map[string]map[string]ServedAt) []Pairing {
	var rows []Pairing
	for _, kind := range Kinds {
		for _, server := range Servers {
			at, ok := addrs[server][kind]
			if !ok {
				continue
			}
			for _, client := range echoclient.Stacks {
				if !pairs(server, client, kind) {
					continue
				}
				rows = append(rows, Pairing{server, client, kind, at.Addr, at.PID, at.Handler})
			}
		}
	}
	return rows
}

// pairs reports whether client can call server on an address of kind: a
// grpc-go server takes the gRPC protocol alone; in-process, grpc-go's
// takes grpc-go clients and connect-go's connect-go clients.
func pairs(server, client, kind string) bool {
	switch kind {
	case "inproc":
		return (server == GRPCServer) == (client == echoclient.GRPC)
	case "shm":
		return server == GRPCServer && client == echoclient.GRPC
	}
	return server == ConnectServer || client == echoclient.GRPC || client == echoclient.ConnectGRPC
}
