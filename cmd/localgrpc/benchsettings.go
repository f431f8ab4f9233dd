package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/localgrpc/localgrpc/cmd/internal/report"
)

// settings are the flags a run's figures depend on, as the report shows
// them: the values the run used (--quick's and the defaults resolved), so
// that a report read later says how to measure it again. The filters show
// only when set.
func (f *benchFlags) settings() []report.Setting {
	cfg := f.config().WithDefaults()
	cpus := make([]string, len(f.cpu))
	for i, p := range f.cpu {
		cpus[i] = strconv.Itoa(p)
	}
	s := []report.Setting{
		{Key: "quick", Value: strconv.FormatBool(f.quick)},
		{Key: "strings", Value: strconv.Itoa(cfg.Strings)},
		{Key: "size", Value: fmt.Sprintf("%d B a string, %d B an Echo text", cfg.StringSize, cfg.TextSize)},
		{Key: "benchtime", Value: f.benchtime},
		{Key: "count", Value: strconv.Itoa(f.count)},
		{Key: "callers", Value: strconv.Itoa(cfg.Callers)},
		{Key: "cpu", Value: strings.Join(cpus, ",")},
		{Key: "confidence", Value: strconv.FormatFloat(f.confidence, 'g', -1, 64)},
		{Key: "baseline", Value: f.baseline},
	}
	if f.workload != "" {
		s = append(s, report.Setting{Key: "workload", Value: f.workload})
	}
	if f.impl != "" {
		s = append(s, report.Setting{Key: "impl", Value: f.impl})
	}
	if f.untested {
		s = append(s, report.Setting{Key: "untested", Value: "true"})
	}
	return s
}
