package github

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// Bounds on the App key's modulus. GitHub issues 2048-bit keys; the upper
// bound keeps the cost of one signature small.
const (
	minKeyBits = 2048
	maxKeyBits = 8192
	maxPEMSize = 64 << 10
)

// ParseAppKey parses a GitHub App private key: exactly one unencrypted PEM
// block of type "RSA PRIVATE KEY" (PKCS#1, what GitHub hands out) or
// "PRIVATE KEY" (PKCS#8) holding an RSA key of 2048 to 8192 bits, with
// nothing but whitespace around it. Anything else is refused, because it
// means the file is not what the operator thinks it is.
//
// Errors wrap ErrUnconfigured and describe the problem without quoting the
// input. The caller checks that the file is protected (docs/design.md §3)
// before reading it; this function sees only bytes.
func ParseAppKey(pemBytes []byte) (*rsa.PrivateKey, error) {
	bad := func(why string) error {
		return fmt.Errorf("github: app key: %w: %s", ErrUnconfigured, why)
	}
	if len(pemBytes) > maxPEMSize {
		return nil, bad("file is too large to be a private key")
	}
	trimmed := bytes.TrimSpace(pemBytes)
	if !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
		return nil, bad("not a PEM file, or text before the key")
	}
	block, rest := pem.Decode(trimmed)
	if block == nil {
		return nil, bad("not a valid PEM block")
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, bad("more than one PEM block, or text after the key")
	}
	if len(block.Headers) != 0 {
		return nil, bad("PEM headers present (an encrypted key?); use an unencrypted key")
	}
	var key *rsa.PrivateKey
	switch block.Type {
	case "RSA PRIVATE KEY":
		var err error
		if key, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			return nil, bad("malformed PKCS#1 RSA key")
		}
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, bad("malformed PKCS#8 key")
		}
		var ok bool
		if key, ok = k.(*rsa.PrivateKey); !ok {
			return nil, bad("PKCS#8 key is not RSA; GitHub Apps use RSA keys")
		}
	case "ENCRYPTED PRIVATE KEY":
		return nil, bad("encrypted key; use an unencrypted key in a protected file")
	case "OPENSSH PRIVATE KEY":
		return nil, bad("OpenSSH key format; use the PEM file GitHub provides")
	default:
		return nil, bad(fmt.Sprintf("PEM block type %q is not an RSA private key", block.Type))
	}
	if n := key.N.BitLen(); n < minKeyBits || n > maxKeyBits {
		return nil, bad(fmt.Sprintf("RSA key has %d bits, want %d to %d", n, minKeyBits, maxKeyBits))
	}
	if err := key.Validate(); err != nil {
		return nil, bad("RSA key fails validation")
	}
	return key, nil
}
