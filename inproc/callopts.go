package inproc

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/localgrpc/localgrpc/inproc/internal/handover"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// callInfo is what a call's options ask for, and the client side the
// call was made on. The options a Channel has no use for (compression,
// once its name is checked, and wait-for-ready) are accepted and ignored.
type callInfo struct {
	client  *client // whose stats handlers hear the call, and whose connection's close ends it
	copy    CopyMode
	codec   encoding.CodecV2 // nil: protobuf
	maxRecv int              // the client's limits, grpc-go's defaults unless set
	maxSend int
	// report is nil unless an option asks to hear of the call: most
	// calls have none, and every call carries its callInfo.
	report *callReport
}

// callReport holds the options that hear of a call, its credentials and
// what it returns besides the response, and what it says of itself that
// most calls leave to the defaults.
type callReport struct {
	subtype   string // the content-subtype, as grpc-go sends it
	authority string // the :authority the handler sees; empty: defaultAuthority
	headers   []*metadata.MD
	trailers  []*metadata.MD
	peers     []*peer.Peer
	creds     []credentials.PerRPCCredentials
	onFinish  []func(error)
	// waitForReady is grpc.WaitForReady's: a Channel is always ready, so
	// it changes nothing but what the call's stats say (FailFast).
	waitForReady bool
}

// withDefaults returns the channel's default call options followed by a
// call's own, as grpc-go combines them.
func (ch *Channel) withDefaults(opts []grpc.CallOption) []grpc.CallOption {
	if len(ch.cfg.defaultCallOptions) == 0 {
		return opts
	}
	return append(slices.Clip(ch.cfg.defaultCallOptions), opts...)
}

// callInfo is what opts ask of a call made on cl.
func (cl *client) callInfo(opts []grpc.CallOption) (callInfo, error) {
	return newCallInfo(cl, cl.copy, opts)
}

// newCallInfo reads opts for a call of cl (nil: of no channel yet) whose
// channel copies as mode.
func newCallInfo(cl *client, mode CopyMode, opts []grpc.CallOption) (callInfo, error) {
	ci := callInfo{client: cl, copy: mode, maxRecv: handover.DefaultMaxRecvMsgSize, maxSend: handover.DefaultMaxSendMsgSize}
	var (
		forced              encoding.CodecV2
		subtype, compressor string
	)
	for _, o := range opts {
		switch o := o.(type) {
		case copyOption:
			if ci.copy != encode {
				ci.copy = o.mode
			}
		case grpc.HeaderCallOption:
			ci.reporter().headers = append(ci.report.headers, o.HeaderAddr)
		case grpc.TrailerCallOption:
			ci.reporter().trailers = append(ci.report.trailers, o.TrailerAddr)
		case grpc.PeerCallOption:
			ci.reporter().peers = append(ci.report.peers, o.PeerAddr)
		case grpc.PerRPCCredsCallOption:
			ci.reporter().creds = append(ci.report.creds, o.Creds)
		case grpc.OnFinishCallOption:
			ci.reporter().onFinish = append(ci.report.onFinish, o.OnFinish)
		case grpc.MaxRecvMsgSizeCallOption:
			ci.maxRecv = o.MaxRecvMsgSize
		case grpc.MaxSendMsgSizeCallOption:
			ci.maxSend = o.MaxSendMsgSize
		case grpc.ForceCodecV2CallOption:
			forced = o.CodecV2
		case grpc.ForceCodecCallOption:
			forced = codecV1{o.Codec}
		case grpc.ContentSubtypeCallOption:
			subtype = strings.ToLower(o.ContentSubtype)
		case grpc.CompressorCallOption:
			compressor = o.CompressorType
		case grpc.AuthorityOverrideCallOption:
			ci.reporter().authority = o.Authority
		case grpc.FailFastCallOption:
			ci.reporter().waitForReady = !o.FailFast
		}
	}
	if forced == nil && subtype == "" && compressor == "" {
		return ci, nil // most calls': protobuf, uncompressed
	}
	if err := ci.setCodec(forced, subtype); err != nil {
		return ci, err
	}
	return ci, checkCompressor(compressor)
}

// checkCompressor refuses a compressor name no compressor is registered
// for, as grpc-go's client does before it sends anything. In-process
// nothing is compressed, but a misspelt name fails as over a socket.
func checkCompressor(name string) error {
	if name == "" || name == encoding.Identity || encoding.GetCompressor(name) != nil {
		return nil
	}
	return status.Errorf(codes.Internal, "grpc: Compressor is not installed for requested grpc-encoding %q", name)
}

// setCodec chooses the call's codec as grpc-go does once every option is
// read: a forced codec wins; otherwise the last content-subtype names one,
// and an empty one, like "proto", means protobuf's (nil: the handover's).
func (ci *callInfo) setCodec(forced encoding.CodecV2, subtype string) error {
	if forced != nil && subtype == "" {
		subtype = strings.ToLower(forced.Name())
	}
	if subtype != "" {
		ci.reporter().subtype = subtype
	}
	switch {
	case forced != nil:
		ci.codec = forced
	case subtype == "" || subtype == "proto":
	default:
		if ci.codec = encoding.GetCodecV2(subtype); ci.codec == nil {
			return status.Errorf(codes.Internal, "no codec registered for content-subtype %s", subtype)
		}
	}
	return nil
}

// contentType is the content-type the call's messages go with.
func (ci *callInfo) contentType() string {
	if ci.report == nil || ci.report.subtype == "" {
		return "application/grpc"
	}
	return "application/grpc+" + ci.report.subtype
}

// authority is the :authority the handler sees.
func (ci *callInfo) authority() string {
	if ci.report == nil || ci.report.authority == "" {
		return defaultAuthority
	}
	return ci.report.authority
}

// failFast says the call fails at once if the channel is not ready, as
// grpc-go's client tells its stats handlers: unless grpc.WaitForReady.
func (ci *callInfo) failFast() bool {
	return ci.report == nil || !ci.report.waitForReady
}

// requests is the direction of the call's requests to m on ch: the
// client's send limit, the server's receive limit.
func (ci *callInfo) requests(ch *Channel, m *method, spare *handover.Spare) handover.Direction {
	return ci.direction(ci.maxSend, ch.cfg.serverMaxRecv, &m.requests, spare)
}

// responses is the direction of the call's responses from m on ch: the
// server's send limit, the client's receive limit.
func (ci *callInfo) responses(ch *Channel, m *method, spare *handover.Spare) handover.Direction {
	return ci.direction(ch.cfg.serverMaxSend, ci.maxRecv, &m.responses, spare)
}

// direction is a direction of the call, with its copy mode and codec.
func (ci *callInfo) direction(maxSend, maxRecv int, slot *handover.Slot, spare *handover.Spare) handover.Direction {
	return handover.Direction{
		Limits: handover.Limits{MaxSend: maxSend, MaxRecv: maxRecv, Spare: spare},
		Slot:   slot,
		Mode:   ci.copy.mode(),
		Codec:  ci.codec,
	}
}

// checkUnrouted checks a request to a method that does not exist, as a
// network would encode it before the server says so; nothing is copied.
// It returns the request's size, encoded.
func (ci *callInfo) checkUnrouted(req any) (int, error) {
	d := ci.direction(ci.maxSend, math.MaxInt, new(handover.Slot), nil)
	d.Mode = handover.Share
	_, n, err := d.Send(req)
	return n, err
}

// left is why the client no longer waits for the call: its context
// ended, or its connection closed. It is nil while neither happened.
func (ci *callInfo) left(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	if ci.connClosed() {
		return ci.connErr()
	}
	return nil
}

// connClosed reports whether the call's connection has closed. A call on
// the Channel itself has no connection to close.
func (ci *callInfo) connClosed() bool {
	closed := ci.client.closed
	return closed != nil && closed.Err() != nil
}

// closing is closed once the call's connection closes. It is nil for a
// call on the Channel itself.
func (ci *callInfo) closing() <-chan struct{} {
	if closed := ci.client.closed; closed != nil {
		return closed.Done()
	}
	return nil
}

// connErr is the error a call ends with when its connection closes.
func (ci *callInfo) connErr() error { return context.Cause(ci.client.closed) }

func (ci *callInfo) reporter() *callReport {
	if ci.report == nil {
		ci.report = &callReport{}
	}
	return ci.report
}

// begins checks what grpc-go's client checks before a call begins, in
// its order: the outgoing metadata of ctx, then that neither ctx nor the
// call's connection has ended. It returns the metadata (see requestMD).
func (ci *callInfo) begins(ctx context.Context) (metadata.MD, error) {
	md, err := requestMD(ctx)
	if err != nil {
		return nil, err
	}
	return md, ci.left(ctx)
}

// unbegun ends a call that failed with err before it began, and returns
// err. grpc-go's client fails such a call (one whose options, metadata or
// context it refuses) before it tags it for its stats handlers. Of its
// call options, only grpc.OnFinish hears of it.
func (ci *callInfo) unbegun(err error) error {
	if ci.report != nil {
		for _, f := range ci.report.onFinish {
			f(err)
		}
	}
	return err
}

// requestMD is the outgoing metadata of ctx (a copy), which is refused,
// as grpc-go refuses it, if its transport could not send it.
func requestMD(ctx context.Context) (metadata.MD, error) {
	md, ok := metadata.FromOutgoingContext(ctx)
	if !ok {
		return nil, nil
	}
	if err := validateRawKeys(ctx); err != nil {
		return nil, err
	}
	if err := validateMetadata(md); err != nil {
		return nil, err
	}
	return md, nil
}

// taggedMD is the metadata that goes out of a call begun with md in ctx
// (see begins), which its client stats handlers tagged as tagged: a
// TagRPC may add metadata, as a trace's propagator does.
func taggedMD(ctx, tagged context.Context, md metadata.MD) (metadata.MD, error) {
	if tagged == ctx {
		return md, nil
	}
	return requestMD(tagged)
}

// outgoing is the metadata the server receives: md, the request's
// metadata as begins or taggedMD returned it, and what per-RPC
// credentials add.
func (ci *callInfo) outgoing(ctx context.Context, fullMethod string, md metadata.MD) (metadata.MD, error) {
	if ci.report == nil {
		return md, toRequest(md)
	}
	if len(ci.report.creds) > 0 {
		ctx = withRequestInfo(ctx, fullMethod)
	}
	for _, c := range ci.report.creds {
		service := fullMethod
		if i := strings.LastIndex(fullMethod, "/"); i > 0 {
			service = fullMethod[:i]
		}
		kv, err := c.GetRequestMetadata(ctx, "inproc://"+service)
		if err != nil {
			return nil, credsError(err)
		}
		if md == nil {
			md = metadata.MD{}
		}
		for k, v := range kv {
			k = strings.ToLower(k)
			if err := validatePair(k, []string{v}); err != nil {
				return nil, err
			}
			md[k] = append(md[k], v)
		}
	}
	return md, toRequest(md)
}

func (ci *callInfo) wantsFinish() bool {
	r := ci.report
	return r != nil && (r.headers != nil || r.trailers != nil || r.peers != nil || r.onFinish != nil)
}

// finish reports the end of a call to the options that asked.
// copyMD copies md; none stays none, as grpc-go reports a header that
// never came (a trailer it reports empty).
func copyMD(md metadata.MD) metadata.MD {
	if md == nil {
		return nil
	}
	return md.Copy()
}

func (ci *callInfo) finish(header, trailer metadata.MD, err error) {
	if ci.report == nil {
		return
	}
	for _, h := range ci.report.headers {
		*h = copyMD(header)
	}
	for _, t := range ci.report.trailers {
		*t = trailer.Copy()
	}
	for _, p := range ci.report.peers {
		*p = *ci.client.peerOf()
	}
	for _, f := range ci.report.onFinish {
		f(err)
	}
}

// credsError is the error a call fails with when its per-call credentials
// fail, with the codes grpc-go's transport gives: a status passes unless
// its code is one gRFC A54 reserves for the data plane.
func credsError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return status.Errorf(codes.Internal, "transport: per-RPC creds failed due to error: %v", err)
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.FailedPrecondition,
		codes.Aborted, codes.OutOfRange, codes.DataLoss:
		return status.Errorf(codes.Internal, "transport: received per-RPC creds error with illegal status: %v", err)
	}
	return err
}

// validateMetadata applies the rules grpc-go's transport applies to
// outgoing metadata, so a call that would fail over a socket fails here.
func validateMetadata(md metadata.MD) error {
	for k, vs := range md {
		if err := validatePair(k, vs); err != nil {
			return err
		}
	}
	return nil
}

func validatePair(k string, vs []string) error {
	if k == "" {
		return status.Error(codes.Internal, "there is an empty key in the header")
	}
	if k[0] == ':' {
		return nil // pseudo-headers are skipped, as in grpc-go
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return status.Errorf(codes.Internal, "header key %q contains illegal characters not in [0-9a-z-_.]", k)
		}
	}
	if strings.HasSuffix(k, "-bin") {
		return nil
	}
	for _, v := range vs {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c > 0x7E {
				return status.Errorf(codes.Internal, "header key %q contains value with non-printable ASCII characters", k)
			}
		}
	}
	return nil
}

// codecV1 lets a call force an old-style encoding.Codec.
type codecV1 struct{ encoding.Codec }

func (c codecV1) Marshal(v any) (mem.BufferSlice, error) {
	b, err := c.Codec.Marshal(v)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (c codecV1) Unmarshal(data mem.BufferSlice, v any) error {
	return c.Codec.Unmarshal(data.Materialize(), v)
}
