package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version is what `localgrpc --version` prints after the name: the
// module's version, the VCS revision it was built from, and the grpc-go
// and connect-go it was built with, all read from the build info, so
// that a report of a bug or a benchmark says which code ran.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build info) " + runtime.Version()
	}
	return versionOf(info)
}

// versionOf is version for info: "v1.2.0 (revision 4636b52…, modified)
// grpc-go v1.75.0 connect-go v1.18.1 go1.26.0".
func versionOf(info *debug.BuildInfo) string {
	parts := []string{info.Main.Version}
	if parts[0] == "" {
		parts[0] = "(devel)"
	}
	var rev string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		r := "(revision " + rev
		if modified {
			r += ", modified"
		}
		parts = append(parts, r+")")
	}
	for _, d := range []struct{ name, path string }{{"grpc-go", "google.golang.org/grpc"}, {"connect-go", "connectrpc.com/connect"}} {
		for _, m := range info.Deps {
			if m.Path == d.path {
				v := m.Version
				if m.Replace != nil && m.Replace.Version != "" {
					v = m.Replace.Version
				}
				parts = append(parts, d.name+" "+v)
			}
		}
	}
	return strings.Join(append(parts, info.GoVersion), " ")
}
