package github

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// TestTransportErrorClasses: a failed round trip is told by its cause
// class (the operator's first question), and never by its text, which can
// hold the URL.
func TestTransportErrorClasses(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://api.github.com/secret-path", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{context.Background(), wrap(&net.DNSError{Err: "no such host", Name: "api.github.com", IsNotFound: true}), "name resolution failed"},
		{context.Background(), wrap(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "connection refused"},
		{context.Background(), wrap(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), "TLS failed"},
		{context.Background(), wrap(&tls.CertificateVerificationError{Err: errors.New("x509: unknown authority")}), "TLS failed"},
		{context.Background(), wrap(os.ErrDeadlineExceeded), "timeout"},
		{context.Background(), context.DeadlineExceeded, "deadline exceeded"},
		{ended, errors.New("anything"), "canceled"},
		{context.Background(), wrap(os.NewSyscallError("read", syscall.ECONNRESET)), "connection failed"},
	} {
		if got := transportError(c.ctx, c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}
