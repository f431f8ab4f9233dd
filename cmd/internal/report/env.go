package report

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Environment is where results were measured, recorded with them so that a
// table read later says what machine and what versions it describes.
type Environment struct {
	GoVersion string
	GOOS      string
	GOARCH    string
	// CPU is the processor's model name, or "" where it is not known.
	CPU string
	// NumCPU is how many logical CPUs the process could use.
	NumCPU int
	// GOMAXPROCS are the values the benchmarks ran with.
	GOMAXPROCS []int
	// Modules are the versions of the gRPC implementations compared.
	Modules []Module
}

// A Module is a Go module the benchmarks ran and its version in this
// binary.
type Module struct {
	// Name is what people call it: "grpc-go".
	Name string
	// Path is its module path.
	Path string
	// Version is the version linked into this binary, "(devel)" for the
	// main module outside a release, or "" if the binary does not
	// contain it.
	Version string
}

// trackedModules are the modules whose versions decide the comparison.
var trackedModules = []Module{
	{Name: "localgrpc", Path: "github.com/localgrpc/localgrpc"},
	{Name: "grpc-go", Path: "google.golang.org/grpc"},
	{Name: "connect-go", Path: "connectrpc.com/connect"},
	{Name: "grpchan", Path: "github.com/fullstorydev/grpchan"},
	{Name: "protobuf-go", Path: "google.golang.org/protobuf"},
}

// CurrentEnvironment describes this process, for benchmarks run with the
// given GOMAXPROCS values.
func CurrentEnvironment(gomaxprocs []int) Environment {
	env := Environment{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		CPU:        cpuModel(),
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: gomaxprocs,
	}
	versions := make(map[string]string)
	if bi, ok := debug.ReadBuildInfo(); ok {
		versions[bi.Main.Path] = bi.Main.Version
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			versions[d.Path] = d.Version
		}
	}
	for _, m := range trackedModules {
		m.Version = versions[m.Path]
		env.Modules = append(env.Modules, m)
	}
	return env
}

// cpuModel reads the processor's model name where the system says it
// (Linux), as `go test` prints it on its "cpu:" line.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// Config returns the environment as configuration lines of the Go
// benchmark format, the keys `go test` writes (goos, goarch, cpu) and
// more, so that benchstat shows them and a later reader can tell runs
// apart. Modules missing from the binary are left out.
func (e Environment) Config() []benchfmt.Config {
	cfg := []benchfmt.Config{
		{Key: "goos", Value: []byte(e.GOOS), File: true},
		{Key: "goarch", Value: []byte(e.GOARCH), File: true},
	}
	if e.CPU != "" {
		cfg = append(cfg, benchfmt.Config{Key: "cpu", Value: []byte(e.CPU), File: true})
	}
	cfg = append(cfg,
		benchfmt.Config{Key: "go", Value: []byte(e.GoVersion), File: true},
		benchfmt.Config{Key: "numcpu", Value: []byte(strconv.Itoa(e.NumCPU)), File: true},
	)
	for _, m := range e.Modules {
		if m.Version != "" {
			cfg = append(cfg, benchfmt.Config{Key: m.Name, Value: []byte(m.Version), File: true})
		}
	}
	return cfg
}

// Summary is the environment in one line: "go1.26.8 linux/amd64, AMD EPYC,
// 2 CPUs, GOMAXPROCS 2; grpc-go v1.85.0, ...".
func (e Environment) Summary() string {
	var b strings.Builder
	b.WriteString(e.GoVersion + " " + e.GOOS + "/" + e.GOARCH)
	if e.CPU != "" {
		b.WriteString(", " + e.CPU)
	}
	b.WriteString(", " + strconv.Itoa(e.NumCPU) + " CPUs, GOMAXPROCS ")
	for i, p := range e.GOMAXPROCS {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.Itoa(p))
	}
	for i, m := range e.Modules {
		if i == 0 {
			b.WriteString("; ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(m.Name + " " + m.VersionOrMissing())
	}
	return b.String()
}

// VersionOrMissing is the module's version, or "(not in this binary)".
func (m Module) VersionOrMissing() string {
	if m.Version == "" {
		return "(not in this binary)"
	}
	return m.Version
}
