package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// securityFlags are call's flags for transport security, named and meant
// as grpcurl's: https://github.com/fullstorydev/grpcurl#usage.
type securityFlags struct {
	plaintext  bool
	insecure   bool
	cacert     string
	cert, key  string
	servername string
	authority  string
	// connectTimeout bounds a connection's making, as grpcurl's
	// -connect-timeout does.
	connectTimeout time.Duration
}

// securityHelp is what --help says of them.
const securityHelp = `Calls are plaintext to a unix or abstract socket and to TCP on this machine
(localhost, a loopback IP or :PORT), as localgrpc serve expects; to any other
address they use TLS, verifying the server's certificate against this
machine's CAs, unless --plaintext. --cacert, --insecure, --cert and
--servername ask for TLS on any address. The flags mean what grpcurl's do.`

func (s *securityFlags) add(fl *pflag.FlagSet) {
	fl.BoolVar(&s.plaintext, "plaintext", false, "no TLS, even to another machine")
	fl.BoolVar(&s.insecure, "insecure", false, "TLS without verifying the server's certificate (testing only)")
	fl.StringVar(&s.cacert, "cacert", "", "verify the server's certificate against the CA certificates in `FILE` (PEM)")
	fl.StringVar(&s.cert, "cert", "", "present the client certificate in `FILE` (PEM; with --key)")
	fl.StringVar(&s.key, "key", "", "the client certificate's private key, in `FILE` (PEM; with --cert)")
	fl.StringVar(&s.servername, "servername", "", "verify that the server's certificate is for `NAME`, and send it in TLS's SNI")
	fl.DurationVar(&s.connectTimeout, "connect-timeout", defaultConnectTimeout, "fail a connection whose server has not answered after `d` (0: wait without bound)")
	fl.StringVar(&s.authority, "authority", "", "the :authority (HTTP Host) of each call, and the name TLS verifies unless --servername")
}

// tlsAsked reports whether a flag that only TLS uses was given.
func (s *securityFlags) tlsAsked() bool {
	return s.insecure || s.cacert != "" || s.cert != "" || s.servername != ""
}

// useTLS reports whether calls to a use TLS.
func (s *securityFlags) useTLS(a localgrpc.Address) bool {
	if s.plaintext {
		return false
	}
	return s.tlsAsked() || !a.OnThisMachine()
}

// check says what is wrong with the flags, as usage errors.
func (s *securityFlags) check() error {
	switch {
	case s.plaintext && s.tlsAsked():
		return errors.New("--plaintext turns TLS off: it does not go with --insecure, --cacert, --cert, --key or --servername")
	case s.insecure && s.cacert != "":
		return errors.New("--insecure skips verifying the server's certificate: it does not go with --cacert, which verifies it")
	case (s.cert == "") != (s.key == ""):
		return errors.New("--cert and --key go together: the client certificate and its private key")
	case s.authority != "" && s.servername != "":
		return errors.New("--authority is also the name TLS verifies: give --authority or --servername, not both")
	}
	return nil
}

// tlsConfig is the TLS configuration the flags give, reading their
// files; a file that cannot be read or parsed is a usage error.
func (s *securityFlags) tlsConfig() (*tls.Config, error) {
	// Without --servername, grpc-go verifies the authority's host, as
	// grpcurl's calls do; connect-go's client is told it (httpClient).
	cfg := &tls.Config{ServerName: s.servername, InsecureSkipVerify: s.insecure}
	if s.cacert != "" {
		pem, err := os.ReadFile(s.cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in the file", s.cacert)
		}
	}
	if s.cert != "" {
		pair, err := tls.LoadX509KeyPair(s.cert, s.key)
		if err != nil {
			return nil, fmt.Errorf("--cert %s --key %s: %w", s.cert, s.key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// hostOf is authority's host, without a port.
func hostOf(authority string) string {
	if host, _, err := net.SplitHostPort(authority); err == nil {
		return host
	}
	return authority
}

// defaultConnectTimeout is grpcurl's.
const defaultConnectTimeout = 10 * time.Second

// grpcOptions are the client options the flags give grpc-go, for a.
func (s *securityFlags) grpcOptions(a localgrpc.Address) ([]localgrpc.ClientOption, error) {
	var opts []localgrpc.ClientOption
	if s.authority != "" {
		opts = append(opts, localgrpc.WithGRPCDialOptions(grpc.WithAuthority(s.authority)))
	}
	if a.Kind != localgrpc.Shm && s.connectTimeout > 0 {
		// shm: takes no grpc-go option: its handshake has a bound of its
		// own, 10 seconds, or the call's deadline if sooner.
		params := grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: s.connectTimeout}
		opts = append(opts, localgrpc.WithGRPCDialOptions(grpc.WithConnectParams(params)))
	}
	switch {
	case s.useTLS(a):
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, localgrpc.WithClientTransportCredentials(credentials.NewTLS(cfg)))
	case s.plaintext && !a.OnThisMachine():
		opts = append(opts, localgrpc.WithClientTransportCredentials(insecure.NewCredentials()))
	}
	return opts, nil
}

// httpClient is the HTTP client of a connect-go stack for a, and the base
// URL of its calls.
func (s *securityFlags) httpClient(addr string, a localgrpc.Address) (*http.Client, string, error) {
	opts := []localgrpc.HTTPClientOption{localgrpc.WithHTTPClientConnectTimeout(s.connectTimeout)}
	if s.useTLS(a) {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, "", err
		}
		if cfg.ServerName == "" && s.authority != "" {
			// The URL's host is the address's, not the authority's.
			cfg.ServerName = hostOf(s.authority)
		}
		opts = append(opts, localgrpc.WithHTTPClientTLS(cfg))
	}
	hc, base, err := localgrpc.HTTPClient(addr, opts...)
	if err != nil {
		return nil, "", err
	}
	return s.withAuthority(hc), base, nil
}

// withAuthority makes hc send --authority as each request's Host.
func (s *securityFlags) withAuthority(hc *http.Client) *http.Client {
	if s.authority == "" {
		return hc
	}
	return &http.Client{Transport: authorityTransport{hc.Transport, s.authority}}
}

type authorityTransport struct {
	next      http.RoundTripper
	authority string
}

func (t authorityTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Host = t.authority
	return t.next.RoundTrip(req)
}

// CloseIdleConnections lets the client's CloseIdleConnections reach the
// transport.
func (t authorityTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// securityError says what to pass when err, a call's that had no
// response, comes from the transport security of the two ends not
// matching; ok is false for any other error.
func (s *securityFlags) securityError(err error, a localgrpc.Address) (string, bool) {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "certificate signed by unknown authority"):
		return "the server's certificate is signed by a CA this machine does not trust: pass --cacert FILE with that CA's certificate, or --insecure not to verify it", true
	case strings.Contains(msg, "certificate is valid for") || strings.Contains(msg, "certificate is not valid for any names") ||
		strings.Contains(msg, "doesn't contain any IP SANs"):
		return "the server's certificate is not for the name called: pass --servername NAME with a name it is for, or --insecure not to verify it", true
	case strings.Contains(msg, "first record does not look like a TLS handshake") || strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return "the server does not speak TLS: pass --plaintext", true
	case strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate") || strings.Contains(msg, "unknown certificate authority"):
		return "the server refused the client certificate, or wants one: pass --cert FILE and --key FILE with one it trusts", true
	case !closedEarly(msg):
		return "", false
	case !s.useTLS(a) && s.plaintext:
		return "the server closed the plaintext connection; if it speaks TLS, call without --plaintext", true
	case !s.useTLS(a) && a.Kind == localgrpc.TCP:
		return "the server closed the plaintext connection; if it speaks TLS, pass --cacert FILE (or --insecure)", true
	case s.cert == "":
		// In TLS 1.3 the server checks the client's certificate after
		// the client's side of the handshake is done: a refusal comes
		// as the connection's end.
		return "the server closed the TLS connection; if it wants a client certificate, pass --cert FILE and --key FILE", true
	}
	return "", false
}

// closedEarly reports whether msg, a call's error, says that the server
// ended the connection before it answered. The words are those of
// grpc-go's transport and of Go's net and net/http: neither gives a typed
// error through a call's status.
func closedEarly(msg string) bool {
	for _, s := range []string{"error reading server preface", "EOF", "connection reset", "broken pipe", "malformed HTTP response", "frame too large", "client conn could not be established"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
