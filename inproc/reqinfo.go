package inproc

import (
	"context"

	"google.golang.org/grpc/credentials"
)

// Per-call credentials (oauth's, say) read the call's method and the
// connection's security from credentials.RequestInfoFromContext, which
// grpc-go's transport sets and only it can: its key is unexported, so it
// is probed, as context.go probes the others.
var requestInfoKey = probeKey(func(ctx context.Context) { credentials.RequestInfoFromContext(ctx) })

// authInfo is what an in-process call says of its security: a call that
// never leaves the process is as private as one over TLS, so credentials
// that require transport security (credentials.CheckSecurityLevel) are
// satisfied.
type authInfo struct{ credentials.CommonAuthInfo }

func (authInfo) AuthType() string { return "inproc" }

var inprocAuthInfo = authInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}

// requestInfoContext is a client's context with the RequestInfo of its
// call, for per-call credentials.
type requestInfoContext struct {
	context.Context
	info credentials.RequestInfo
}

func (c *requestInfoContext) Value(key any) any {
	if key == requestInfoKey {
		return c.info
	}
	return c.Context.Value(key)
}

// withRequestInfo gives ctx the RequestInfo of a call of method, if the
// key could be probed and answering it is read back as grpc-go's.
func withRequestInfo(ctx context.Context, method string) context.Context {
	if requestInfoKey == nil {
		return ctx
	}
	c := &requestInfoContext{Context: ctx, info: credentials.RequestInfo{Method: method, AuthInfo: inprocAuthInfo}}
	if _, ok := credentials.RequestInfoFromContext(c); !ok {
		return ctx
	}
	return c
}
