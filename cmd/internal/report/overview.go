package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// An overviewChart is every impl's time per op relative to the baseline's
// in every group at once: a grid, a row per impl and a column per group,
// each cell the ratio, coloured blue where the impl is faster and orange
// where it is slower, the deeper the further from 1×, and grey where the
// difference is not significant.
type overviewChart struct {
	baseline string
	cols     []overviewCol
	rows     []overviewRow
}

// An overviewCol is a group of the overview: its name in lines (the
// workload, then each parameter) and whether it has the baseline.
type overviewCol struct {
	lines       []string
	title       string
	hasBaseline bool
}

// An overviewRow is an impl of the overview and its cell in each group.
type overviewRow struct {
	impl  string
	color string
	cells []overviewCell
}

// An overviewCell is an impl in a group: absent (the impl did not run
// there, or the group has no baseline), or its ratio to the baseline.
type overviewCell struct {
	present     bool
	ratio       float64
	significant bool
	p           float64
}

// Overview geometry, in pixels.
const (
	ovLabelW   = 170 // impl names
	ovColMinW  = 72  // a column holds "respSize=100" at 11 px
	ovRowH     = 22
	ovHeadTop  = 44 // title and legend, above the column names
	ovLineH    = 13 // a line of a column's name
	ovBottom   = 8
	ovMaxDepth = 2 // decades of ratio at which a cell's colour is deepest
)

// overview builds the report's overview chart: every impl but the
// baseline, those that are faster across groups first (by the geometric
// mean of their ratios).
func (r *Report) overview() overviewChart {
	ov := overviewChart{baseline: r.Baseline}
	severalProcs := false
	for _, g := range r.Groups {
		severalProcs = severalProcs || g.GOMAXPROCS != r.Groups[0].GOMAXPROCS
	}
	index := make(map[string]int)
	for gi, g := range r.Groups {
		col := overviewCol{lines: []string{g.Workload}, title: g.Title()}
		if g.Params != "" {
			col.lines = append(col.lines, strings.Split(g.Params, "/")...)
		}
		if severalProcs {
			col.lines = append(col.lines, "GOMAXPROCS "+strconv.Itoa(g.GOMAXPROCS))
		}
		_, col.hasBaseline = g.row(r.Baseline)
		ov.cols = append(ov.cols, col)
		for _, row := range g.Rows {
			if row.Impl == r.Baseline {
				continue
			}
			i, ok := index[row.Impl]
			if !ok {
				i = len(ov.rows)
				index[row.Impl] = i
				ov.rows = append(ov.rows, overviewRow{impl: row.Impl, color: implColor(row), cells: make([]overviewCell, len(r.Groups))})
			}
			if row.Ratio > 0 {
				ov.rows[i].cells[gi] = overviewCell{true, row.Ratio, row.Significant, row.P}
			}
		}
	}
	mean := func(row overviewRow) float64 {
		sum, n := 0.0, 0
		for _, c := range row.cells {
			if c.present {
				sum, n = sum+math.Log(c.ratio), n+1
			}
		}
		if n == 0 {
			return math.Inf(1)
		}
		return sum / float64(n)
	}
	slices.SortStableFunc(ov.rows, func(a, b overviewRow) int {
		ma, mb := mean(a), mean(b)
		switch {
		case ma < mb:
			return -1
		case ma > mb:
			return 1
		}
		return 0
	})
	return ov
}

// drawn says whether the overview has anything to show: a ratio.
func (ov overviewChart) drawn() bool {
	for _, row := range ov.rows {
		for _, c := range row.cells {
			if c.present {
				return true
			}
		}
	}
	return false
}

// colW is the width of a column.
func (ov overviewChart) colW() int {
	return max(ovColMinW, (chartWidth-ovLabelW-10)/max(len(ov.cols), 1))
}

// headLines is the most lines a column's name takes.
func (ov overviewChart) headLines() int {
	n := 1
	for _, c := range ov.cols {
		n = max(n, len(c.lines))
	}
	return n
}

func (ov overviewChart) width() int { return ovLabelW + 10 + len(ov.cols)*ov.colW() }

func (ov overviewChart) height() int {
	return ovHeadTop + ov.headLines()*ovLineH + 6 + len(ov.rows)*ovRowH + ovBottom
}

// title is the overview's title.
func (ov overviewChart) title() string {
	return "Time per op relative to " + ov.baseline + ", every workload"
}

// cellColor is the fill of a cell and the colour of its text.
func cellColor(c overviewCell) (fill, text string) {
	if !c.significant {
		return "#eaeef2", colorText
	}
	depth := math.Min(1, math.Abs(math.Log10(c.ratio))/ovMaxDepth)
	// From a pale tint at 1× to the full colour at ovMaxDepth decades.
	from, to := [3]float64{0xe6, 0xef, 0xfc}, [3]float64{0x0b, 0x4f, 0xc2} // blue: faster
	if c.ratio > 1 {
		from, to = [3]float64{0xfd, 0xee, 0xe0}, [3]float64{0xbc, 0x4c, 0x00} // orange: slower
	}
	mix := func(i int) int { return int(math.Round(from[i] + depth*(to[i]-from[i]))) }
	fill = fmt.Sprintf("#%02x%02x%02x", mix(0), mix(1), mix(2))
	text = colorText
	if depth > 0.45 {
		text = colorBackground
	}
	return fill, text
}

// formatRatioShort is a ratio in two significant digits: "0.025×",
// "1.3×", "46×".
func formatRatioShort(x float64) string {
	if x >= 9.95 {
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64) + "×"
	}
	return strconv.FormatFloat(x, 'g', 2, 64) + "×"
}

// write writes the overview as an <svg> element at vertical offset y.
// hrefs, if not nil, are links for the columns' names, one per group.
func (ov overviewChart) write(w io.Writer, y int, hrefs []string) {
	width, h, colW := ov.width(), ov.height(), ov.colW()
	svgOpen(w, y, width, h, ov.title())
	fmt.Fprintf(w, `<text x="0" y="34" fill="%s">%s</text>`+"\n", colorMuted, escapeXML(
		"each cell: the impl's median ÷ "+ov.baseline+"'s; below 1× (blue) faster, above (orange) slower; ~ grey: no significant difference"))
	top := ovHeadTop + ov.headLines()*ovLineH + 6
	for ci, col := range ov.cols {
		cx := ovLabelW + 10 + ci*colW + colW/2
		open, end := "", ""
		if hrefs != nil {
			open, end = fmt.Sprintf(`<a href="%s">`, escapeXML(hrefs[ci])), "</a>"
		}
		fmt.Fprintf(w, `%s<text x="%d" y="%d" text-anchor="middle" font-size="11"><title>%s</title>`, open, cx, ovHeadTop+ovLineH-2, escapeXML(col.title))
		for li, l := range col.lines {
			weight := ""
			if li == 0 {
				weight = ` font-weight="bold"`
			}
			fmt.Fprintf(w, `<tspan x="%d" dy="%d"%s>%s</tspan>`, cx, min(li, 1)*ovLineH, weight, escapeXML(l))
		}
		fmt.Fprintf(w, "</text>%s\n", end)
	}
	for ri, row := range ov.rows {
		ry := top + ri*ovRowH
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="8" height="%d" fill="%s"/>`, ovLabelW-8, ry+5, ovRowH-10, row.color)
		fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", ovLabelW-14, float64(ry)+ovRowH/2.0, escapeXML(row.impl))
		for ci, c := range row.cells {
			cx := ovLabelW + 10 + ci*colW
			if !c.present {
				why := row.impl + " did not run in " + ov.cols[ci].title
				if !ov.cols[ci].hasBaseline {
					why = ov.cols[ci].title + " has no " + ov.baseline
				}
				fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="middle" dominant-baseline="middle" fill="%s">–<title>%s</title></text>`+"\n",
					cx+colW/2, float64(ry)+ovRowH/2.0, colorMuted, escapeXML(why))
				continue
			}
			fill, text := cellColor(c)
			label := formatRatioShort(c.ratio)
			how := fmt.Sprintf("%.3g× faster", 1/c.ratio)
			if c.ratio > 1 {
				how = fmt.Sprintf("%.3g× slower", c.ratio)
			}
			if !c.significant {
				label = "~" + label
				how = "no significant difference"
			}
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s, %s: %s × %s's time per op, %s (p=%.3f)</title></rect>`+"\n",
				cx+1, ry+1, colW-2, ovRowH-2, fill, escapeXML(ov.cols[ci].title), escapeXML(row.impl), formatRatioShort(c.ratio), escapeXML(ov.baseline), how, c.p)
			fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="middle" dominant-baseline="middle" fill="%s">%s</text>`+"\n",
				cx+colW/2, float64(ry)+ovRowH/2.0, text, escapeXML(label))
		}
	}
	fmt.Fprintln(w, "</svg>")
}
