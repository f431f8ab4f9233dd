package fanout

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Hedging is the policy of WithHedging.
// It follows "The Tail at Scale" (Dean and Barroso, CACM 2013).
// A shard's call that is slow to produce its first response is sent again
// to another replica.
// The first to respond wins.
// Only the wait for the first response is hedged.
// Once a replica has responded, the stream stays with it.
type Hedging struct {
	// Delay is how long a call waits for its first response before the
	// next replica is called. With Percentile set, it is the delay until
	// the shard has seen enough first responses to measure one; zero then
	// means no hedge until then.
	Delay time.Duration
	// Percentile, in (0, 100), when set, makes the delay that percentile of
	// the shard's recent first-response latencies.
	// Those are the latencies of the last 128 calls that had one.
	// So about 100-Percentile % of calls are hedged.
	// Calls cancelled before they answered are not among them.
	// So the measure leans fast when many calls are hedged.
	Percentile float64
	// Budget bounds the extra load.
	// Hedges are at most this fraction of the shard's calls: 0.1 allows 10%
	// more calls.
	// After a quiet spell, the burst is at most 10 hedges.
	// Zero means 0.1.
	Budget float64
}

const (
	latencyWindow  = 128 // first-response latencies a shard keeps
	minSamples     = 16  // before which a percentile is not trusted
	resortEvery    = 8   // new samples between two computations of the percentile
	defaultBudget  = 0.1
	maxBudgetBurst = 10 // hedges a quiet shard may save up
)

func (h *Hedging) check() error {
	switch {
	case h.Delay < 0:
		return fmt.Errorf("fanout: Hedging.Delay %v is negative", h.Delay)
	case h.Percentile < 0 || h.Percentile >= 100 || math.IsNaN(h.Percentile):
		return fmt.Errorf("fanout: Hedging.Percentile %v is not in (0, 100)", h.Percentile)
	case h.Delay == 0 && h.Percentile == 0:
		return fmt.Errorf("fanout: Hedging needs a Delay or a Percentile")
	case h.Budget < 0 || math.IsNaN(h.Budget) || math.IsInf(h.Budget, 0):
		return fmt.Errorf("fanout: Hedging.Budget %v is not a fraction of calls", h.Budget)
	}
	return nil
}

// A hedger is one shard's hedging state: its budget and its latencies.
type hedger struct {
	policy Hedging
	budget float64

	mu     sync.Mutex
	tokens float64 // hedges the budget allows now
	window [latencyWindow]time.Duration
	seen   int // latencies observed, of which the window holds the last
	fresh  int // observed since delay was computed
	delay  time.Duration
	sorted []time.Duration // scratch for the percentile
}

func newHedger(policy Hedging) *hedger {
	h := &hedger{policy: policy, budget: policy.Budget, delay: policy.Delay}
	if h.budget == 0 {
		h.budget = defaultBudget
	}
	return h
}

// called earns the budget's share of a call.
func (h *hedger) called() {
	h.mu.Lock()
	h.tokens = min(h.tokens+h.budget, maxBudgetBurst)
	h.mu.Unlock()
}

// allow spends a hedge of the budget, if it holds one.
func (h *hedger) allow() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tokens < 1 {
		return false
	}
	h.tokens--
	return true
}

// after is how long to wait for a first response before hedging, and
// whether to hedge at all.
func (h *hedger) after() (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delay, h.delay > 0
}

// observe records a first response's latency.
func (h *hedger) observe(d time.Duration) {
	if h.policy.Percentile == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.window[h.seen%latencyWindow] = d
	h.seen++
	h.fresh++
	if h.seen < minSamples || h.fresh < resortEvery {
		return
	}
	h.fresh = 0
	h.sorted = append(h.sorted[:0], h.window[:min(h.seen, latencyWindow)]...)
	slices.Sort(h.sorted)
	rank := int(math.Ceil(h.policy.Percentile/100*float64(len(h.sorted)))) - 1
	h.delay = max(h.sorted[max(rank, 0)], time.Microsecond)
}
