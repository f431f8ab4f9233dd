// Package tagzoo holds the batch package's test messages: batches whose
// repeated field has a tag of one to five bytes, and a service that
// streams them.
package tagzoo

//go:generate go -C ../../../cmd tool buf generate ../batch/internal/tagzoo --template ../batch/internal/tagzoo/buf.gen.yaml
