package report

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromiumNames are the names a Chromium or Chrome binary goes by.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell"}

// findChromium returns the path of a headless-capable Chromium: the one
// $LOCALGRPC_CHROMIUM names, or the first of chromiumNames on $PATH.
func findChromium() (string, bool) {
	if p := os.Getenv("LOCALGRPC_CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// pageCheck is injected into a copy of the page: it records every script
// error from the start, and once the page has loaded writes what it
// measured into the body's data-check attribute, which --dump-dom then
// shows: each <svg>'s box and, for each chart, how many marks (bars and
// dots) it has and how many drew with no width or height.
const pageCheck = `<script>
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push(String(e.message || e)); });
window.addEventListener("load", function () {
  var out = {errors: window.__errors, svgs: [], height: document.documentElement.scrollHeight};
  document.querySelectorAll("svg").forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var bars = 0, empty = 0;
    svg.querySelectorAll("rect, circle").forEach(function (r) {
      if (!r.querySelector("title")) return;
      bars++;
      var b = r.getBBox();
      if (!(b.width > 0 && b.height > 0)) empty++;
    });
    out.svgs.push({title: (svg.querySelector("title") || {}).textContent, width: box.width, height: box.height, bars: bars, empty: empty});
  });
  document.body.setAttribute("data-check", JSON.stringify(out));
});
</script>
`

// The page in a real browser: headless Chromium loads it with no script
// error, every chart draws, its box and each of its marks of a non-zero
// size, and the charts as the browser parsed them read true on their
// axes (see checkChartAxes), a log one among them. Skipped where no
// Chromium is installed.
func TestHTMLInBrowser(t *testing.T) {
	chromium, ok := findChromium()
	if !ok {
		t.Skipf("no Chromium found (looked for $LOCALGRPC_CHROMIUM and %s on $PATH): "+
			"install it, on Debian or Ubuntu with `apt-get install -y chromium` as root, to check the HTML page in a browser",
			strings.Join(chromiumNames, ", "))
	}
	// ListStrings spans less than linearSpan, Unary many decades: a
	// linear time axis and a log one.
	text := results("BenchmarkListStrings/impl=IMPL/respSize=10-2", implTimes, implOrder, 5) + wideResults()
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	rep.Settings = testSettings
	rep.Verdict = rep.Conclude()
	var page strings.Builder
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(page.String(), "<head>\n", "<head>\n"+pageCheck, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,1000", "--virtual-time-budget=5000",
		"--dump-dom", "file://"+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", chromium, err, stderr.String())
	}
	m := regexp.MustCompile(`data-check="([^"]*)"`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's check did not run: no data-check in the DOM Chromium dumped\n%s\n%s", dom, stderr.String())
	}
	var got struct {
		Errors []string
		Height float64
		SVGs   []struct {
			Title         string
			Width, Height float64
			Bars, Empty   int
		}
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatalf("%v: %s", err, m[1])
	}
	if len(got.Errors) > 0 {
		t.Errorf("script errors: %q", got.Errors)
	}
	checkChartAxes(t, rep, string(dom))
	// A dot per impl, and a bar per positive B/op and allocs/op.
	marks := 0
	for _, g := range rep.Groups {
		for _, row := range g.Rows {
			marks++
			for _, v := range []float64{row.Bytes, row.Allocs} {
				if v > 0 {
					marks++
				}
			}
		}
	}
	if want := 1 + 2*len(rep.Groups); len(got.SVGs) != want {
		t.Fatalf("%d charts drew, want the overview and 2 per group: %+v", len(got.SVGs), got.SVGs)
	}
	drawn := 0
	for _, s := range got.SVGs {
		if s.Width <= 0 || s.Height <= 0 {
			t.Errorf("chart %q drew %v×%v px", s.Title, s.Width, s.Height)
		}
		if s.Bars == 0 || s.Empty > 0 {
			t.Errorf("chart %q: %d of its %d marks drew empty", s.Title, s.Empty, s.Bars)
		}
		if !strings.HasPrefix(s.Title, "Time per op relative to") {
			drawn += s.Bars
		}
	}
	if drawn != marks {
		t.Errorf("%d marks drew, want %d: a dot per impl, a bar per positive B/op and allocs/op", drawn, marks)
	}
	t.Logf("%s drew the page %v px tall: %d charts, %d marks", chromium, got.Height, len(got.SVGs), drawn)
}
