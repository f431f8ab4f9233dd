// Package report turns benchmark results in the Go benchmark format into
// the comparison `localgrpc bench` shows: for each workload, every impl's
// median time per op with its confidence interval, its memory per op, and
// its ratio to a baseline impl, fastest first. It writes that comparison
// as text, markdown, CSV, JSON, SVG charts or a self-contained HTML page,
// each opening with a verdict (Conclude: what to pick and why, in the
// run's own figures) and the run's settings, and marking the rows whose
// interval is too wide to trust.
//
// The statistics are golang.org/x/perf's benchmath, the same as
// benchstat's: medians, order-statistic confidence intervals and
// Mann-Whitney U tests, which assume nothing about how the samples are
// distributed. Results are grouped as `benchstat -col /impl` groups them:
// by full benchmark name without its impl=NAME part.
package report
