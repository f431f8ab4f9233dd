package report

import (
	"html/template"
	"io"
	"strings"
)

// htmlPage is the report as one page that needs nothing but itself: the
// charts are inline SVG and the style is inline CSS, so it can be mailed
// or opened offline. It is also well-formed XML, which its test checks.
var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>localgrpc bench</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 800px; color: #24292f; }
table { border-collapse: collapse; margin: 1em 0 2em; font-size: 14px; }
th, td { padding: 2px 10px; border-bottom: 1px solid #d0d7de; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.baseline { color: #57606a; font-style: italic; }
svg { display: block; margin: 1em 0; max-width: 100%; height: auto; }
dt { font-weight: bold; float: left; clear: left; width: 9em; }
dd { margin-left: 10em; }
</style>
</head>
<body>
<h1>localgrpc bench</h1>
{{if .Verdict}}<h2>Verdict</h2>
<ul>
{{range .Verdict}}<li>{{.}}</li>
{{end}}</ul>
{{end}}<dl>
{{if .Settings}}<dt>Settings</dt><dd>{{.Settings}}</dd>
{{end}}<dt>Go</dt><dd>{{.Env.GoVersion}} {{.Env.GOOS}}/{{.Env.GOARCH}}</dd>
<dt>CPU</dt><dd>{{if .Env.CPU}}{{.Env.CPU}}{{else}}unknown{{end}}, {{.Env.NumCPU}} logical CPUs</dd>
<dt>GOMAXPROCS</dt><dd>{{range $i, $p := .Env.GOMAXPROCS}}{{if $i}}, {{end}}{{$p}}{{end}}</dd>
{{range .Env.Modules}}<dt>{{.Name}}</dt><dd>{{.VersionOrMissing}}</dd>
{{end}}</dl>
<p>{{.Legend}}</p>
{{range .Groups}}<section>
<h2>{{.Title}}, {{.Runs}} runs</h2>
{{range .Charts}}{{.}}{{end}}<table>
<tr>{{range $i, $h := $.Header}}<th{{if index $.Numeric $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Baseline}} class="baseline"{{end}}>{{range $i, $c := .Cells}}<td{{if index $.Numeric $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
</section>
{{end}}{{if .Notes}}<h2>Notes</h2>
<ul>
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
{{end}}</body>
</html>
`))

// WriteHTML writes the report as a self-contained HTML page: the verdict,
// the settings and the environment, and for each group a chart of time
// per op with its confidence intervals and one of allocations per op,
// both on log scales, above the group's table.
func (r *Report) WriteHTML(w io.Writer) error {
	type htmlRow struct {
		Cells    []string
		Baseline bool
	}
	type htmlGroup struct {
		Title  string
		Runs   int
		Charts []template.HTML
		Rows   []htmlRow
	}
	data := struct {
		Verdict  []string
		Settings string
		Env      Environment
		Legend   string
		Header   []string
		Numeric  []bool
		Groups   []htmlGroup
		Notes    []string
	}{r.Verdict, r.settingsLine(), r.Environment, r.legend(), r.tableHeader(), r.numericColumns(), nil, r.Notes}
	for _, g := range r.Groups {
		hg := htmlGroup{Title: g.Title(), Runs: maxRuns(g)}
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
