package inproc

import (
	"fmt"

	"github.com/localgrpc/localgrpc/inproc/internal/handover"
	"google.golang.org/grpc"
)

// CopyMode says how a message passes from its sender to its receiver.
type CopyMode uint8

const (
	// Clone gives the receiver its own deep copy, as a network would.
	// Neither side can observe the other's later changes.
	//
	// The copy is taken before the sender's SendMsg returns.
	// For a unary call, it is taken before Invoke hands the request to the
	// handler, and when the handler returns its response.
	// So a sender may change and send the same message again at once, as
	// streaming loops over grpc-go do.
	//
	// A copy holds every value a socket would deliver, bit for bit, -0 and NaN
	// payloads included.
	// It parses unknown fields as a socket's receiver does.
	//
	// How the copy is made depends on the message's Go type, decided once per
	// type:
	//   - A generated message of strings, bytes, plain scalars, repeated
	//     strings and messages of such fields is copied field by field.
	//     Strings are shared: Go never changes a string's bytes.
	//   - Another with vtprotobuf's CloneMessageVT is copied by it.
	//     CloneMessageVT copies an empty list, map or bytes as empty.
	//     So below the top level, at any depth, such a field comes out empty
	//     where a socket gives nil.
	//     The receiver's top level is as a socket's.
	//   - A message that brings its own Marshal and Unmarshal (gogoproto's) is
	//     copied by one call of each.
	//   - Other protobuf messages are copied by protobuf's Marshal and
	//     Unmarshal, as grpc-go's codec would.
	//   - Messages that are not protobuf go through the call's codec.
	Clone CopyMode = iota
	// Share gives the receiver its own top-level message. Its fields share
	// memory with the sender's message. Nothing else is copied.
	//
	// Share's rule has two halves:
	//   - The sender never changes a message after sending it.
	//   - The receiver may set its message's fields, but never writes into
	//     what they hold: the elements of lists and bytes, and nested
	//     messages. This holds even after a reslice such as l = l[:0].
	//
	// The receiver may do these to its top level without reaching the
	// sender's message:
	//   - Assign or clear any field, through protobuf's API or plain Go.
	//   - Merge into it (proto.Merge, a merging Unmarshal) where the merge
	//     writes into no message a field holds. Fields with presence get
	//     boxes of their own. Oneofs get wrappers of their own, which
	//     protobuf's reflection writes through. A gogoproto message's oneof
	//     wrappers are shared, since its own code assigns new ones. The opaque
	//     API's repeated fields get headers of their own.
	//   - Append to a list or bytes. Their capacity is clipped to their
	//     length, so an append reallocates.
	//   - Change a map. Maps are copied: a map of n entries costs n
	//     insertions. Message values in a map are shared; bytes values are
	//     clipped.
	//
	// These reach the sender's message, and race with a sender still
	// reading it:
	//   - a store to an element of a list or bytes;
	//   - an append after a reslice, as in the in-place filter
	//     out := l[:0] then out = append(out, x), or the buffer reuse
	//     b = append(b[:0], ...);
	//   - protobuf's List().Set, and List().Truncate then Append;
	//   - any change to a nested message, a merge into a message field that
	//     is set included, since protobuf merges into the message the field
	//     holds.
	//
	// Copying every list and bytes field instead would cost an allocation
	// and a copy per field per message. That is more than twice Share's
	// time on a stream of 100-string messages.
	//
	// The receiver's top level holds values as a socket delivers them:
	//   - an empty list, map or bytes without presence comes out nil;
	//   - a nil bytes value in a map, a list or a oneof comes out empty,
	//     and a list holding one is copied;
	//   - a oneof holding a typed nil wrapper comes out unset.
	//
	// The messages the top level holds are the sender's. So below the top
	// level, at any depth, values come out as sent:
	//   - an empty list, map or bytes stays empty, not nil;
	//   - a nil bytes value in a map, a list or a oneof stays nil;
	//   - a oneof holding a typed nil wrapper stays set.
	//
	// A message that only its wire encoding carries as a socket would is
	// copied as with [Clone]:
	//   - one with extensions set, since the receiver's registry decides
	//     what they decode to;
	//   - one with lazy fields, unknown fields, or nil messages in lists,
	//     maps or oneofs;
	//   - a dynamic message;
	//   - one nested past a hundred levels;
	//   - a legacy message that has a Marshal or an Unmarshal of its own
	//     without bringing all three of Marshal, Unmarshal and Size, or
	//     that holds such a message.
	//     Protobuf encodes and decodes it by those.
	//
	// A message that brings its own Marshal, Unmarshal and Size
	// (gogoproto's) is measured by its Size alone. An error that only its
	// Marshal or Unmarshal would report is not reported.
	//
	// gRPC already forbids changing a message after SendMsg. Over a socket
	// the rule is harmless to break, because SendMsg serializes the message
	// before it returns. With Share nothing enforces it, and the most
	// common streaming loop breaks it:
	//
	//	req := &pb.Request{}
	//	for i := range n {
	//		req.Text = strconv.Itoa(i) // changes what the receiver gets
	//		stream.Send(req)
	//	}
	//
	// The receiver then sees later values in place of earlier ones, or a
	// mix of them. The race detector reports a data race. Use Share only
	// where every message sent is a fresh one that nobody changes after
	// sending. Otherwise pass [CallCopy]([Clone]) to the calls that reuse
	// messages.
	//
	// Limits are checked as with Clone. The size check is what Share costs.
	Share

	// encode is a transport's binding's (see client.copy): messages cross
	// encoded, as over the transport's network.
	encode
)

// mode is m as the handover package knows it.
func (m CopyMode) mode() handover.Mode {
	switch m {
	case Share:
		return handover.Share
	case encode:
		return handover.Encode
	}
	return handover.Clone
}

func (m CopyMode) String() string {
	switch m {
	case Clone:
		return "clone"
	case Share:
		return "share"
	}
	return fmt.Sprintf("CopyMode(%d)", uint8(m))
}

// Execution says where a handler runs.
type Execution uint8

const (
	// Isolated runs each handler on a goroutine of its own.
	// A client whose context ends returns at once, even if the handler ignores
	// its context, exactly as over a socket.
	// A client may refuse a message it took (over its receive limit, say).
	// It then first lets its handler return, for 10 ms at most.
	// That mirrors a socket, where the server's trailer most often reaches
	// its client before the client's reset reaches the server.
	Isolated Execution = iota
	// Inline runs unary handlers on the caller's goroutine.
	// It runs stream handlers as coroutines driven by the caller.
	// Calls run at function-call speed.
	//
	// A stream handler runs while the caller waits for it.
	// It hands control back as soon as it has sent (or made room for) what the
	// caller waits for.
	// Code after that runs when the caller next needs the handler.
	// A handler may also send or receive from goroutines it starts: one sender
	// and one receiver at a time, as gRPC allows.
	// Those goroutines wait as Isolated handlers do.
	//
	// Cancellation is cooperative:
	//   - The handler's context ends with the caller's, with Stop, with the
	//     call, and with the Close of the localgrpc client that made it.
	//   - A client waits for a handler that ignores its context.
	//   - A handler that blocks on something other than its stream blocks its
	//     caller.
	//   - A client whose context ended no longer drives its handler.
	//     Its next call reports the cancel, however much the handler would
	//     still send.
	//   - A stream handler whose client leaves before first driving it never
	//     runs.
	//     Over a socket it would start and find its context cancelled.
	//
	// A client may refuse a message it took (over its receive limit, say).
	// It then drives the handler once more, until the handler would wait, as a
	// socket's server runs on:
	//   - A handler that then returns sends its trailer.
	//   - A handler that waits on anything but its stream finds its context
	//     ended after 10 ms, as the client's reset would end it.
	//     Its trailer is lost.
	//
	// A handler's panic reaches the caller, whose goroutine ran it.
	// The call still ends, with Internal, and is counted out.
	// So a caller that recovers the panic can still GracefulStop.
	Inline
)

func (e Execution) String() string {
	switch e {
	case Isolated:
		return "isolated"
	case Inline:
		return "inline"
	}
	return fmt.Sprintf("Execution(%d)", uint8(e))
}

// CallCopy returns a call option that sets the copy mode of one call,
// overriding the Channel's. Other ClientConns ignore it.
func CallCopy(mode CopyMode) grpc.CallOption {
	return copyOption{mode: mode}
}

type copyOption struct {
	grpc.EmptyCallOption
	mode CopyMode
}
