package report

import (
	"html/template"
	"io"
	"strconv"
	"strings"
)

// htmlPage is the report as one page that needs nothing but itself: the
// charts are inline SVG and the style is inline CSS, so it can be mailed
// or opened offline. It is also well-formed XML, which its test checks.
//
// It opens with the verdict, a finding per item, each figure in bold and
// the workloads' figures under it; then the contents, which stay in view
// at the left of a wide window; the overview, every impl's time per op
// relative to the baseline in every workload at once; then a section per
// workload with its charts and table; the notes; and the run's settings
// and environment.
var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<meta name="color-scheme" content="light"/>
<title>localgrpc bench</title>
<style>
html { background: #ffffff; }
body { font-family: sans-serif; margin: 2em auto; max-width: 1000px; padding: 0 1em; color: #24292f; background: #ffffff; line-height: 1.4; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0 1em; font-size: 14px; }
th, td { padding: 2px 10px; border-bottom: 1px solid #d0d7de; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.baseline { color: #57606a; font-style: italic; }
svg { display: block; margin: 1em 0; max-width: 100%; height: auto; }
dt { font-weight: bold; float: left; clear: left; width: 9em; }
dd { margin-left: 10em; }
ul.verdict { padding-left: 1.2em; }
ul.verdict > li { margin-bottom: 0.8em; }
.clause { display: block; }
.aside { color: #57606a; font-size: 0.9em; }
.figure { font-weight: bold; }
ul.figures { list-style: none; padding: 0; margin: 0.3em 0 0.5em; display: flex; flex-wrap: wrap; gap: 4px; font-size: 13px; }
ul.figures li { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 4px; padding: 1px 6px; }
ul.figures li.none { color: #57606a; }
nav#contents { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.5em 1em; font-size: 14px; }
nav#contents h2 { font-size: 1em; margin: 0.3em 0; border: none; }
nav#contents ol { margin: 0; padding-left: 1.4em; }
a.top { font-size: 13px; }
@media (min-width: 1500px) {
  nav#contents { position: fixed; top: 1em; left: 1em; width: 220px; max-height: calc(100vh - 4em); overflow: auto; }
}
</style>
</head>
<body>
<h1>localgrpc bench</h1>
{{if .Verdict}}<section id="verdict">
<h2>Verdict</h2>
<ul class="verdict">
{{template "items" .Verdict}}</ul>
</section>
{{end}}<nav id="contents">
<h2>Contents</h2>
<ol>
{{if .Verdict}}<li><a href="#verdict">Verdict</a></li>
{{end}}{{if .Overview}}<li><a href="#overview">Overview: time per op relative to the baseline</a></li>
{{end}}<li><a href="#workloads">Workloads</a>
<ol>
{{range .Groups}}<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{end}}</ol></li>
{{if .FloorGap}}<li><a href="#floor-gap">Left to gain against the floors (for maintainers)</a></li>
{{end}}{{if .Notes}}<li><a href="#notes">Notes</a></li>
{{end}}<li><a href="#run">Settings and environment</a></li>
</ol>
</nav>
{{if .Overview}}<section id="overview">
<h2>Overview</h2>
{{if .OverviewNote}}<p>{{.OverviewNote}}</p>
{{end}}{{.Overview}}</section>
{{end}}<h2 id="workloads">Workloads</h2>
{{if .Noise}}<p class="noise">{{.Noise}}</p>
{{end}}<p>{{.Legend}} Each workload has a chart of time per op, each median a dot and its interval a whisker, on a log scale where the times differ more than 20 times, and one of memory per op, B/op and allocations side by side as bars from 0.</p>
{{range .Groups}}<section id="{{.ID}}">
<h3>{{.Title}}, {{.Runs}}</h3>
{{range .Charts}}{{.}}{{end}}<table>
<tr>{{range $i, $h := $.Header}}<th{{if index $.Numeric $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Baseline}} class="baseline"{{end}}>{{range $i, $c := .Cells}}<td{{if index $.Numeric $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
<a class="top" href="#contents">↑ contents</a>
</section>
{{end}}{{if .FloorGap}}<section id="floor-gap">
<h2>Left to gain against the floors</h2>
<p>For maintainers: how far the defaults are from the least a channel keeping the same contract must pay.</p>
<ul class="verdict">
{{template "items" .FloorGap}}</ul>
</section>
{{end}}{{if .Notes}}<section id="notes">
<h2>Notes</h2>
<ul>
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
</section>
{{end}}<section id="run">
<h2>Settings and environment</h2>
<dl>
{{if .Settings}}<dt>Settings</dt><dd>{{.Settings}}</dd>
{{end}}<dt>Go</dt><dd>{{.Env.GoVersion}} {{.Env.GOOS}}/{{.Env.GOARCH}}</dd>
<dt>CPU</dt><dd>{{if .Env.CPU}}{{.Env.CPU}}{{else}}unknown{{end}}, {{.Env.NumCPU}} logical CPUs</dd>
<dt>GOMAXPROCS</dt><dd>{{range $i, $p := .Env.GOMAXPROCS}}{{if $i}}, {{end}}{{$p}}{{end}}</dd>
{{range .Env.Modules}}<dt>{{.Name}}</dt><dd>{{.VersionOrMissing}}</dd>
{{end}}</dl>
</section>
</body>
</html>
{{define "items"}}{{range .}}<li>{{range .Clauses}}<span class="clause">{{range .Spans}}{{if .Aside}}<span class="aside">{{.Text}}</span>{{else if .Figure}}<span class="figure">{{.Text}}</span>{{else}}{{.Text}}{{end}}{{end}}{{if .Figures}}:</span>
<ul class="figures">{{range .Figures}}{{if .Value}}<li>{{.Label}} <b>{{.Value}}</b></li>{{else}}<li class="none" title="no significant difference">{{.Label}} ~</li>{{end}}{{end}}</ul>{{else}}</span>{{end}}
{{end}}</li>
{{end}}{{end}}`))

// WriteHTML writes the report as a self-contained HTML page: the verdict
// as a list of findings, the contents, an overview chart of every impl's
// time per op relative to the baseline in every group, then for each
// group a chart of time per op with its confidence intervals, one of B/op
// and allocations per op side by side, and its table; the notes, the
// settings and the environment last. The charts have opaque backgrounds.
func (r *Report) WriteHTML(w io.Writer) error {
	type htmlRow struct {
		Cells    []string
		Baseline bool
	}
	type htmlGroup struct {
		ID     string
		Title  string
		Runs   string
		Charts []template.HTML
		Rows   []htmlRow
	}
	data := struct {
		Verdict  []verdictItem
		FloorGap []verdictItem
		Overview template.HTML
		// OverviewNote warns against reading across processes.
		OverviewNote string
		Settings     string
		Env          Environment
		Noise        string
		Legend       string
		Header       []string
		Numeric      []bool
		Groups       []htmlGroup
		Notes        []string
	}{nil, nil, "", r.crossProcessNote(), r.settingsLine(), r.Environment, r.NoiseLine(), r.legend(), r.tableHeader(), r.numericColumns(), nil, r.Notes}
	// The findings are worded from the choices Conclude and LeftToGain
	// wrote the report's paragraphs from, never read back from them.
	if len(r.Verdict) > 0 {
		data.Verdict = verdictItems(r.choices())
	}
	if len(r.FloorGap) > 0 {
		data.FloorGap = verdictItems(r.floorChoices())
	}
	ids := groupIDs(r.Groups)
	if ov := r.overview(); ov.drawn() {
		var svg strings.Builder
		hrefs := make([]string, len(ids))
		for i, id := range ids {
			hrefs[i] = "#" + id
		}
		ov.write(&svg, 0, hrefs)
		data.Overview = template.HTML(svg.String()) // built with escapeXML
	}
	for i, g := range r.Groups {
		hg := htmlGroup{ID: ids[i], Title: g.Title(), Runs: runsTitle(g)}
		for _, c := range r.charts(g) {
			var svg strings.Builder
			c.write(&svg, 0)
			hg.Charts = append(hg.Charts, template.HTML(svg.String())) // built with escapeXML
		}
		for _, row := range g.Rows {
			hg.Rows = append(hg.Rows, htmlRow{r.tableRow(row), row.IsBaseline})
		}
		data.Groups = append(data.Groups, hg)
	}
	return htmlPage.Execute(w, data)
}

// groupIDs are the HTML ids of the groups' sections: "g-" and the group's
// name with every character but letters, digits, '-' and '_' as '-',
// made unique by a number where two would be alike.
func groupIDs(groups []Group) []string {
	ids := make([]string, len(groups))
	seen := make(map[string]bool)
	for i, g := range groups {
		id := "g-" + strings.Map(func(r rune) rune {
			if r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
				return r
			}
			return '-'
		}, g.Name())
		for n := 2; seen[id]; n++ {
			id = strings.TrimRight(id, "0123456789") + strconv.Itoa(n)
		}
		seen[id] = true
		ids[i] = id
	}
	return ids
}

// crossProcessNote says, where the run has impls whose server runs in a
// process of its own, that they compare with each other and not with the
// baseline, whose server shares the client's process; "" otherwise.
func (r *Report) crossProcessNote() string {
	for _, k := range []implKind{kindXproc, kindXprocSocket, kindXprocFloor} {
		if len(r.ranOf(k)) > 0 {
			return "The xproc-* rows have their server in a process of its own, and pay what crossing processes costs: " +
				"compare them with each other, as the verdict's \"between processes\" does, not with " + r.Baseline +
				" or any row whose server shares the client's process."
		}
	}
	return ""
}
