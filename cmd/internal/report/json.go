package report

import (
	"encoding/json"
	"io"
)

// The JSON form of a report. Field names are camelCase and every number
// is finite: an unknown interval bound or ratio is null, since JSON has
// no infinity.
type (
	jsonReport struct {
		Verdict     []string        `json:"verdict"`
		FloorGap    []string        `json:"floorGap"` // what is left to gain against the floors
		Settings    []jsonSetting   `json:"settings"` // a list, to keep their order
		Environment jsonEnvironment `json:"environment"`
		Baseline    string          `json:"baseline"`
		Confidence  float64         `json:"confidence"`
		Noise       string          `json:"noise"` // the share of noisy rows, in a sentence
		Groups      []jsonGroup     `json:"groups"`
		Notes       []string        `json:"notes"`
	}
	jsonSetting struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	jsonEnvironment struct {
		GoVersion  string       `json:"goVersion"`
		GOOS       string       `json:"goos"`
		GOARCH     string       `json:"goarch"`
		CPU        string       `json:"cpu"`
		NumCPU     int          `json:"numCPU"`
		GOMAXPROCS []int        `json:"gomaxprocs"`
		Modules    []jsonModule `json:"modules"`
	}
	jsonModule struct {
		Name    string `json:"name"`
		Path    string `json:"path"`
		Version string `json:"version"` // "" when not in the binary
	}
	jsonGroup struct {
		Name       string    `json:"name"` // as go test names it, without impl
		Workload   string    `json:"workload"`
		Params     string    `json:"params"`
		GOMAXPROCS int       `json:"gomaxprocs"`
		Rows       []jsonRow `json:"rows"`
	}
	jsonRow struct {
		Impl        string   `json:"impl"`
		Runs        int      `json:"runs"`
		SecPerOp    float64  `json:"secPerOp"`
		SecPerOpLow *float64 `json:"secPerOpLow"`
		SecPerOpHi  *float64 `json:"secPerOpHigh"`
		BytesPerOp  float64  `json:"bytesPerOp"`
		AllocsPerOp float64  `json:"allocsPerOp"`
		Ratio       *float64 `json:"ratio"`
		P           *float64 `json:"p"`
		Significant bool     `json:"significant"`
		Baseline    bool     `json:"baseline"`
		Noisy       bool     `json:"noisy"` // the interval overlaps the baseline's or a neighbour's
		// The latency of one call, with several callers.
		P50SecPerCall *float64 `json:"p50SecPerCall,omitempty"`
		P99SecPerCall *float64 `json:"p99SecPerCall,omitempty"`
	}
)

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	e := r.Environment
	out := jsonReport{
		Verdict:  append([]string{}, r.Verdict...),
		FloorGap: append([]string{}, r.FloorGap...),
		Settings: []jsonSetting{},
		Environment: jsonEnvironment{
			GoVersion: e.GoVersion, GOOS: e.GOOS, GOARCH: e.GOARCH, CPU: e.CPU,
			NumCPU: e.NumCPU, GOMAXPROCS: e.GOMAXPROCS, Modules: []jsonModule{},
		},
		Baseline:   r.Baseline,
		Confidence: r.Confidence,
		Noise:      r.NoiseLine(),
		Groups:     []jsonGroup{},
		Notes:      append([]string{}, r.Notes...),
	}
	for _, s := range r.Settings {
		out.Settings = append(out.Settings, jsonSetting(s))
	}
	for _, m := range e.Modules {
		out.Environment.Modules = append(out.Environment.Modules, jsonModule(m))
	}
	for _, g := range r.Groups {
		jg := jsonGroup{Name: g.Name(), Workload: g.Workload, Params: g.Params, GOMAXPROCS: g.GOMAXPROCS, Rows: []jsonRow{}}
		for _, row := range g.Rows {
			jr := jsonRow{
				Impl: row.Impl, Runs: row.Runs, SecPerOp: row.Time.Median,
				BytesPerOp: row.Bytes, AllocsPerOp: row.Allocs,
				Significant: row.Significant, Baseline: row.IsBaseline, Noisy: row.Noisy,
			}
			if row.Time.Bounded() {
				jr.SecPerOpLow, jr.SecPerOpHi = &row.Time.Low, &row.Time.High
			}
			if row.Ratio != 0 {
				jr.Ratio, jr.P = &row.Ratio, &row.P
			}
			if row.P99 != 0 {
				jr.P50SecPerCall, jr.P99SecPerCall = &row.P50, &row.P99
			}
			jg.Rows = append(jg.Rows, jr)
		}
		out.Groups = append(out.Groups, jg)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
