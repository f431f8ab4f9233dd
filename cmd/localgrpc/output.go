package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/localgrpc/localgrpc/cmd/internal/report"
)

// The formats a report can be written in.
const (
	formatText     = "text"
	formatMarkdown = "markdown"
	formatCSV      = "csv"
	formatJSON     = "json"
	formatBenchfmt = "benchfmt"
	formatHTML     = "html"
	formatSVG      = "svg"
)

// stdoutFormats are the formats --format takes.
var stdoutFormats = []string{formatText, formatMarkdown, formatCSV, formatJSON, formatBenchfmt}

// checkFormat checks a --format value.
func checkFormat(name string) error {
	if slices.Contains(stdoutFormats, name) {
		return nil
	}
	return fmt.Errorf("unknown format %q; the formats are %s", name, strings.Join(stdoutFormats, ", "))
}

// extensionFormats map the extension of an --output file to its format.
// ".txt" is the Go benchmark format because that is what benchstat's
// users name its input files.
var extensionFormats = map[string]string{
	".html": formatHTML, ".htm": formatHTML,
	".svg":  formatSVG,
	".json": formatJSON,
	".csv":  formatCSV,
	".md":   formatMarkdown, ".markdown": formatMarkdown,
	".txt": formatBenchfmt, ".bench": formatBenchfmt,
}

// writeFormat writes the report in the named format.
func writeFormat(w io.Writer, format string, rep *report.Report, rec *recorder) error {
	switch format {
	case formatText:
		return rep.WriteText(w)
	case formatMarkdown:
		return rep.WriteMarkdown(w)
	case formatCSV:
		return rep.WriteCSV(w)
	case formatJSON:
		return rep.WriteJSON(w)
	case formatHTML:
		return rep.WriteHTML(w)
	case formatSVG:
		return rep.WriteSVG(w)
	case formatBenchfmt:
		_, err := w.Write(rec.text.Bytes())
		return err
	}
	panic("unknown format " + format) // checkFormat and extensionFormats check
}

// An output is an --output file, created before the run so that a path
// that cannot be written fails at once rather than after minutes of
// benchmarks.
type output struct {
	file   *os.File
	format string
}

type outputs []output

// createOutputs checks the --output paths and creates their files. An
// unknown extension is a usage error; a file that cannot be created is a
// failure. On error no file is left behind.
func createOutputs(paths []string) (outputs, error) {
	var outs outputs
	for _, p := range paths {
		ext := filepath.Ext(p)
		format, ok := extensionFormats[strings.ToLower(ext)]
		if !ok {
			outs.discard()
			problem := fmt.Sprintf("unknown extension %q", ext)
			if ext == "" {
				problem = "no extension to choose the format by"
			}
			return nil, fmt.Errorf("--output %q: %s; use .html, .svg, .json, .csv, .md or .txt (the Go benchmark format)", p, problem)
		}
		f, err := os.Create(p)
		if err != nil {
			outs.discard()
			return nil, failure{fmt.Errorf("--output: %w", err)}
		}
		outs = append(outs, output{f, format})
	}
	return outs, nil
}

// write writes the report to every file and closes them.
func (outs outputs) write(rep *report.Report, rec *recorder) error {
	var errs []error
	for _, o := range outs {
		err := writeFormat(o.file, o.format, rep, rec)
		if cerr := o.file.Close(); err == nil {
			err = cerr
		}
		if err == nil && o.format == formatCSV {
			err = writeCSVContext(o.file.Name(), rep)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("writing %s: %w", o.file.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// writeCSVContext writes, beside the CSV table at path, what a CSV table
// cannot hold without breaking the tools that read it: the verdict,
// settings, environment and notes (report.CSVContextPath names the file).
func writeCSVContext(path string, rep *report.Report) error {
	f, err := os.Create(report.CSVContextPath(path))
	if err != nil {
		return err
	}
	err = rep.WriteCSVContext(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// discard closes and removes the files: there is nothing to write.
func (outs outputs) discard() {
	for _, o := range outs {
		o.file.Close()
		os.Remove(o.file.Name())
	}
}
