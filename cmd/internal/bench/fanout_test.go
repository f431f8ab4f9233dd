package bench

import (
	"fmt"
	"slices"
	"testing"
)

// FanOut's backends hold every string once, each backend's messages in
// order, so that the proxy's sorted merge has sorted sources to merge.
func TestSortedListServers(t *testing.T) {
	for _, c := range []struct{ n, size, perMsg, backends int }{
		{100, 10, 10, 4}, {10_000, 100, 10, 1}, {5, 3, 10, 4}, {1001, 2, 7, 3},
	} {
		t.Run(fmt.Sprintf("n=%d/backends=%d", c.n, c.backends), func(t *testing.T) {
			srvs := sortedListServers(c.n, c.size, c.perMsg, c.backends)
			if len(srvs) != c.backends {
				t.Fatalf("%d servers, want %d", len(srvs), c.backends)
			}
			var all []string
			for i, srv := range srvs {
				var own []string
				for _, r := range srv.resps {
					if len(r.Strings) == 0 || len(r.Strings) > c.perMsg {
						t.Fatalf("server %d: a message of %d strings", i, len(r.Strings))
					}
					own = append(own, r.Strings...)
				}
				if !slices.IsSorted(own) {
					t.Errorf("server %d: strings out of order", i)
				}
				all = append(all, own...)
			}
			slices.Sort(all)
			total := len(all)
			if distinct := len(slices.Compact(all)); total != c.n || distinct != c.n {
				t.Errorf("%d strings, %d distinct; want %d", total, distinct, c.n)
			}
		})
	}
}
