package bench

import "testing"

func TestConfigText(t *testing.T) {
	for _, size := range []int{0, 1, 5, 6, 7, 100, 4096} {
		cfg := Config{TextSize: size}.WithDefaults()
		if got := len(cfg.text()); got != cfg.TextSize {
			t.Errorf("TextSize %d: text of %d bytes", cfg.TextSize, got)
		}
	}
	if got := (Config{}).WithDefaults().text(); got != "hello" {
		t.Errorf("default text %q, want hello", got)
	}
}
