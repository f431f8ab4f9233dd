package localgrpc

import (
	"context"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// PeerCred is what the kernel says of the process at the other end of a
// unix or abstract socket (SO_PEERCRED), or of this process for an
// in-process call.
type PeerCred struct {
	UID, GID uint32
	PID      int32
}

// PeerCredFromContext returns the credentials of the client of the call
// whose handler has ctx. It reports false for TCP clients, and on systems
// without SO_PEERCRED.
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

// WithPeerCredentials authorizes the clients of unix and abstract sockets
// by their kernel credentials (SO_PEERCRED, Linux only). With no rules only
// processes of the server's own user are allowed; with rules, those the
// rules allow. A denied client's calls fail with PermissionDenied, and the
// server logs the denial once per connection.
//
// Abstract sockets have no file and so no file permissions: any process in
// the network namespace can connect, and this policy is their only
// protection. TCP clients are not checked; use transport credentials
// (WithGRPCOptions) for them.
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
// socket: the peer's credentials and the policy's verdict.
type socketAuthInfo struct {
	credentials.CommonAuthInfo
	cred    PeerCred
	known   bool // the credentials could be read
	allowed bool
}

func (socketAuthInfo) AuthType() string { return "localgrpc-peercred" }

// peerCreds are the grpc.Server's transport credentials: insecure, except
// that unix connections carry their peer's credentials and verdict.
type peerCreds struct {
	policy *peerPolicy // nil: every client is allowed
	logger *slog.Logger
}

func (c *peerCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if !onSocket(conn.LocalAddr()) {
		return conn, socketAuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}, allowed: true}, nil
	}
	uc := conn
	info := socketAuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}
	cred, err := readPeerCred(uc)
	if err == nil {
		info.cred, info.known = cred, true
	}
	switch {
	case c.policy == nil:
		info.allowed = true
	case err != nil:
		c.logger.Warn("localgrpc: denied a socket client whose credentials cannot be read", "addr", uc.LocalAddr().String(), "err", err)
	case !c.policy.allows(cred):
		c.logger.Warn("localgrpc: denied a socket client by peer credentials", "addr", uc.LocalAddr().String(), "uid", cred.UID, "gid", cred.GID, "pid", cred.PID)
	default:
		info.allowed = true
	}
	return conn, info, nil
}

func (c *peerCreds) ClientHandshake(_ context.Context, _ string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return conn, socketAuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}, nil
}

func (c *peerCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "insecure"}
}

func (c *peerCreds) Clone() credentials.TransportCredentials { cp := *c; return &cp }

func (c *peerCreds) OverrideServerName(string) error { return nil }

// onSocket reports whether a connection whose local address is addr is
// to a unix or abstract socket. A connection that does not say is taken
// for one, so that a peer policy denies it.
func onSocket(addr net.Addr) bool {
	return addr == nil || strings.HasPrefix(addr.Network(), "unix")
}

// checkPeer fails calls from socket clients the policy denied.
func checkPeer(ctx context.Context) error {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	if info, ok := p.AuthInfo.(socketAuthInfo); ok && !info.allowed {
		if info.known {
			return status.Errorf(codes.PermissionDenied, "localgrpc: peer uid %d gid %d is not allowed on this socket", info.cred.UID, info.cred.GID)
		}
		return status.Error(codes.PermissionDenied, "localgrpc: the peer's credentials cannot be read")
	}
	return nil
}

func peerUnaryCheck(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := checkPeer(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func peerStreamCheck(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := checkPeer(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}
