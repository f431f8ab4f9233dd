// Package handover is how a message crosses an in-process call: from the
// sender's message, before its SendMsg returns, to the message the
// receiver allocated. It does what grpc-go's proto codec does with the
// same message over a socket (refuses what Marshal refuses, measures the
// encoded size against the limits, and gives the receiver a message of
// its own) without encoding it where it need not.
//
// A call holds a [Direction] for each way its messages go, made once
// when the call begins: its limits, copy mode and codec. Its methods do
// the work:
//   - [Direction.Send] on the sender's side;
//   - [Direction.Receive] on the receiver's;
//   - [Direction.Transfer], both at once, for a unary response whose
//     receiver has its message at hand;
//   - [Direction.Release], by a stream's receiver: with Clone, the next
//     copy goes into the [Spare], a copy the receiver is done with.
//
// Each direction of a method keeps a [Slot], where the strategy of the
// type it last carried is found by the type word of the message's
// interface. The strategy is chosen once per type (strategy.go,
// newStrategy).
package handover
