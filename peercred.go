package localgrpc

import (
	"context"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// PeerCred is what the kernel says of the process at the other end of a
// unix or abstract socket (SO_PEERCRED), or of this process for an
// in-process call.
type PeerCred struct {
	UID, GID uint32
	PID      int32
}

// PeerCredFromContext returns the credentials of the client of the call
// whose handler has ctx.
// It reports false for TCP clients, and on systems without SO_PEERCRED.
func PeerCredFromContext(ctx context.Context) (PeerCred, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return PeerCred{}, false
	}
	if info, ok := p.AuthInfo.(socketAuthInfo); ok && info.known {
		return info.cred, true
	}
	if _, ok := p.Addr.(inproc.Addr); ok {
		return PeerCred{UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), PID: int32(os.Getpid())}, true
	}
	return PeerCred{}, false
}

// A PeerRule widens a peer policy beyond the server's own user.
type PeerRule func(*peerPolicy)

// AllowUIDs allows socket clients running as any of uids.
func AllowUIDs(uids ...uint32) PeerRule {
	return func(p *peerPolicy) { p.uids = append(p.uids, uids...) }
}

// AllowGIDs allows socket clients whose primary group is any of gids.
func AllowGIDs(gids ...uint32) PeerRule {
	return func(p *peerPolicy) { p.gids = append(p.gids, gids...) }
}

// WithPeerCredentials authorizes the clients of unix and abstract sockets by
// their kernel credentials (SO_PEERCRED, Linux only).
// With no rules, only processes of the server's own user are allowed.
// With rules, those the rules allow are.
// A denied client's calls fail with PermissionDenied.
// The server logs the denial once per connection.
//
// The policy fails closed:
//   - A client whose credentials cannot be read (on systems without
//     SO_PEERCRED, say) is denied.
//   - Every socket call is denied if grpc.Creds given through
//     [WithGRPCServerOptions] replaced the server's own transport
//     credentials.
//     Without those, the policy cannot check anything.
//     Give credentials with [WithTransportCredentials] instead.
//
// Abstract sockets have no file and so no file permissions.
// Any process in the network namespace can connect, and this policy is
// their only protection.
// TCP clients are not checked: use transport credentials for them.
// In-process calls come from this process and are not checked.
func WithPeerCredentials(rules ...PeerRule) ServerOption {
	return func(c *serverConfig) {
		p := &peerPolicy{}
		for _, r := range rules {
			r(p)
		}
		if len(p.uids) == 0 && len(p.gids) == 0 {
			p.uids = []uint32{uint32(os.Getuid())}
		}
		c.peers = p
	}
}

type peerPolicy struct {
	uids, gids []uint32
}

func (p *peerPolicy) allows(c PeerCred) bool {
	return slices.Contains(p.uids, c.UID) || slices.Contains(p.gids, c.GID)
}

// socketAuthInfo is the AuthInfo of a connection to a unix or abstract
// socket: the peer's credentials and the policy's verdict, beside what the
// transport credentials' handshake gave.
type socketAuthInfo struct {
	credentials.CommonAuthInfo // the transport credentials' security level
	cred                       PeerCred
	known                      bool // the credentials could be read
	allowed                    bool
	transport                  credentials.AuthInfo
}

func (socketAuthInfo) AuthType() string { return "localgrpc-peercred" }

// Unwrap returns the AuthInfo of the transport credentials' handshake.
func (i socketAuthInfo) Unwrap() credentials.AuthInfo { return i.transport }

// serverCreds are the grpc.Server's transport credentials: the user's
// (insecure unless WithTransportCredentials) on every connection, and on
// unix socket connections the peer's credentials and the policy's verdict
// too, read before the user's handshake.
type serverCreds struct {
	transport credentials.TransportCredentials
	policy    *peerPolicy // nil: every client is allowed
	logger    *slog.Logger
}

func (c *serverCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if !onSocket(conn.LocalAddr()) {
		return c.transport.ServerHandshake(conn)
	}
	info := socketVerdict(conn, c.policy, c.logger)
	var err error
	conn, info.transport, err = c.transport.ServerHandshake(conn)
	if err != nil {
		return nil, nil, err
	}
	info.CommonAuthInfo = credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}
	if ci, ok := info.transport.(interface {
		GetCommonAuthInfo() credentials.CommonAuthInfo
	}); ok {
		info.CommonAuthInfo = ci.GetCommonAuthInfo()
	}
	return conn, info, nil
}

// socketVerdict reads the credentials of the client at the other end of
// conn, a unix socket connection, and judges them by policy (nil: every
// client is allowed), logging a denial.
func socketVerdict(conn net.Conn, policy *peerPolicy, logger *slog.Logger) socketAuthInfo {
	var info socketAuthInfo
	cred, err := readPeerCred(conn)
	if err == nil {
		info.cred, info.known = cred, true
	}
	switch {
	case policy == nil:
		info.allowed = true
	case err != nil:
		logger.Warn("localgrpc: denied a socket client whose credentials cannot be read", "addr", conn.LocalAddr().String(), "err", err)
	case !policy.allows(cred):
		logger.Warn("localgrpc: denied a socket client by peer credentials", "addr", conn.LocalAddr().String(), "uid", cred.UID, "gid", cred.GID, "pid", cred.PID)
	default:
		info.allowed = true
	}
	return info
}

// denial is the status a denied client's calls fail with; nil if the
// client is allowed.
func (i socketAuthInfo) denial() error {
	switch {
	case i.allowed:
		return nil
	case i.known:
		return status.Errorf(codes.PermissionDenied, "localgrpc: peer uid %d gid %d is not allowed on this socket", i.cred.UID, i.cred.GID)
	}
	return status.Error(codes.PermissionDenied, "localgrpc: the peer's credentials cannot be read")
}

func (c *serverCreds) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return c.transport.ClientHandshake(ctx, authority, conn)
}

func (c *serverCreds) Info() credentials.ProtocolInfo { return c.transport.Info() }

func (c *serverCreds) Clone() credentials.TransportCredentials {
	return &serverCreds{transport: c.transport.Clone(), policy: c.policy, logger: c.logger}
}

func (c *serverCreds) OverrideServerName(name string) error {
	return c.transport.OverrideServerName(name)
}

// onSocket reports whether a connection whose local address is addr is
// to a unix or abstract socket. A connection that does not say is taken
// for one, so that a peer policy denies it.
func onSocket(addr net.Addr) bool {
	return addr == nil || strings.HasPrefix(addr.Network(), "unix")
}

// peerCheck enforces a peer policy on grpc-go's calls, from the verdict
// serverCreds left in each connection's AuthInfo.
type peerCheck struct {
	logger  *slog.Logger
	foreign sync.Once // logs, once, that foreign credentials deny every socket call
}

// errForeignCreds explains the denial of every socket call when the
// server's transport credentials are not localgrpc's.
var errForeignCreds = status.Error(codes.PermissionDenied, "localgrpc: the peer-credential policy cannot check this socket connection: "+
	"its transport credentials are not localgrpc's (grpc.Creds given through WithGRPCServerOptions replaces them; give them with WithTransportCredentials instead)")

// check fails the calls the policy denies, and the socket calls it cannot
// check.
func (p *peerCheck) check(ctx context.Context) error {
	pr, ok := peer.FromContext(ctx)
	if !ok {
		return status.Error(codes.PermissionDenied, "localgrpc: the call has no peer for the peer-credential policy to check")
	}
	if info, ok := pr.AuthInfo.(socketAuthInfo); ok {
		return info.denial()
	}
	if !onSocket(pr.LocalAddr) {
		return nil // TCP: the policy does not apply
	}
	p.foreign.Do(func() {
		p.logger.Error("localgrpc: denying every socket call: grpc.Creds given through WithGRPCServerOptions replaced the credentials the peer-credential policy needs; use WithTransportCredentials")
	})
	return errForeignCreds
}

// tap checks a stream as it arrives, before grpc-go runs any interceptor;
// a status error it returns is what the client gets.
func (p *peerCheck) tap(ctx context.Context, _ *tap.Info) (context.Context, error) {
	return ctx, p.check(ctx)
}

func (p *peerCheck) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := p.check(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (p *peerCheck) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := p.check(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}
