package githubtest

import "encoding/pem"

// CertificatePEM is the fake's TLS certificate in PEM form, for a client in
// another process (the load harness runs the server as a child process) to
// trust exactly this server, as HTTPClient does in this one.
func (s *Server) CertificatePEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}
