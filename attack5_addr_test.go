package localgrpc_test

// attack5: spellings of a host that look local but that DNS or the hosts
// file decides (glibc's inet_aton forms, trailing dots, names other than
// localhost, a link-local address, a zone on an IPv4 address or a name)
// must need credentials, as "localhost." does.

import (
	"errors"
	"testing"

	"github.com/localgrpc/localgrpc"
)

func TestAttack5DNSDecidedSpellingsNeedCredentials(t *testing.T) {
	for _, a := range []string{
		"127.1:443", "127.0.1:443", "0x7f.0.0.1:443", "0177.0.0.1:443", "2130706433:443", "127.0.0.01:443",
		"127.0.0.1.:443", "0.0.0.0.:443", "0:443", "[fe80::1%lo]:443", "[fe80::1]:443", "[::127.0.0.1]:443",
		"localhost.localdomain:443", "ip6-localhost:443", "127.0.0.1%lo:443", "localhost%lo:443", "localhost%2e:443",
		"[localhost.]:443", "LOCALHOST.:443", "dns:///localhost%2e:443", "dns:///localhost%2eevil.example:443",
		"passthrough:///localhost%2e:443", "passthrough:///127.0.0.1%2eevil.example:443", "dns:///127.1:443",
		"dns:///localhost.:443", "dns:///[fe80::1%25lo]:443", "dns:///0x7f000001:443", "dns:///localhost..:443",
		"dns://127.0.0.1:53/127.1:443", "passthrough:///%6cocalhost%2e:443", "passthrough:///[localhost.]:443",
	} {
		cc, err := localgrpc.NewClient(a)
		if err == nil {
			cc.Close()
			t.Errorf("NewClient(%q) without credentials succeeded: DNS decides where it goes", a)
			continue
		}
		var aerr *localgrpc.AddressError
		if !errors.As(err, &aerr) {
			t.Errorf("NewClient(%q): %v, want an *AddressError", a, err)
		}
	}
}
