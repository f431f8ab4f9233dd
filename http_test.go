package localgrpc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListenSocketFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := Listen("unix:"+path, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("socket mode %v, want 0640", fi.Mode().Perm())
	}
	if _, err := Listen("unix:"+path, 0o600); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a second Listen on a live socket: %v", err)
	}
	l.Close()
	l.Close() // twice is harmless
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the socket file: %v", err)
	}
}

func TestListenAndHTTPClientErrors(t *testing.T) {
	for _, addr := range []string{"inproc:x", "dns:///example.com:443", "", "host:port"} {
		if _, err := Listen(addr, 0o600); err == nil {
			t.Errorf("Listen(%q) succeeded", addr)
		}
		if _, _, err := HTTPClient(addr); err == nil {
			t.Errorf("HTTPClient(%q) succeeded", addr)
		}
	}
	for addr, base := range map[string]string{":8080": "http://localhost:8080", "127.0.0.1:1": "http://127.0.0.1:1", "unix:/x.sock": "http://localhost", "unix:@x": "http://localhost"} {
		_, got, err := HTTPClient(addr)
		if err != nil || got != base {
			t.Errorf("HTTPClient(%q): base %q, %v; want %q", addr, got, err, base)
		}
	}
}
