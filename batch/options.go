package batch

import (
	"fmt"
	"time"
)

// An Option configures a Sender.
type Option func(*config)

type config struct {
	maxItems int
	maxBytes int
	maxAge   time.Duration
	size     any // func(I) int
}

// DefaultMaxItems is how many items a batch holds at most unless MaxItems
// says otherwise: Thanos's number for its Store API.
const DefaultMaxItems = 64

// MaxItems sends a batch when it holds n items. The default is
// DefaultMaxItems.
func MaxItems(n int) Option {
	return func(c *config) { c.maxItems = n }
}

// MaxBytes keeps a batch to n bytes encoded.
// An item that would take the batch past n is sent in the next one.
// An item bigger than n goes alone.
//
// An item counts as its size plus the tag and length a repeated field adds:
//   - The size is proto.Size, unless ItemSize says otherwise.
//   - The tag is one byte for field numbers up to 15, and up to five for
//     larger ones.
//   - The tag is learnt from the field the first item is added to.
//   - A batch type that is not a proto.Message (a gogoproto one, say) does
//     not show its field's number. Its items count the longest tag, five
//     bytes.
//
// Set n to the receiver's limit (grpc.MaxCallRecvMsgSize) and every batch
// gets through.
// Without MaxBytes, sizes are not measured.
func MaxBytes(n int) Option {
	return func(c *config) { c.maxBytes = n }
}

// MaxAge sends a batch when its oldest item is d old, even if no other item
// comes.
// So a watcher of a slow source waits at most d.
// Without it, a batch waits for MaxItems, MaxBytes or Flush.
func MaxAge(d time.Duration) Option {
	return func(c *config) { c.maxAge = d }
}

// ItemSize measures items for MaxBytes.
// Use it for items that are not proto.Message, or whose size is known more
// cheaply.
// Its type must be the Sender's item type's.
func ItemSize[I any](size func(I) int) Option {
	return func(c *config) { c.size = size }
}

func (c *config) check() error {
	switch {
	case c.maxItems < 1:
		return fmt.Errorf("batch: MaxItems(%d): a batch holds at least one item", c.maxItems)
	case c.maxBytes < 0:
		return fmt.Errorf("batch: MaxBytes(%d) is negative", c.maxBytes)
	case c.maxAge < 0:
		return fmt.Errorf("batch: MaxAge(%v) is negative", c.maxAge)
	}
	return nil
}
