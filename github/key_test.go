package github_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"heyaira/github"
	"heyaira/github/githubtest"
)

// Row PF-09 (docs/security-tests.md).
func TestParseAppKey(t *testing.T) {
	t.Parallel()
	key := githubtest.Key()
	pkcs1 := githubtest.KeyPEM()
	der8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der8})
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	ecSEC, _ := x509.MarshalECPrivateKey(ec)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	encrypted := pem.EncodeToMemory(&pem.Block{
		Type:    "RSA PRIVATE KEY",
		Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00112233445566778899AABBCCDDEEFF"},
		Bytes:   []byte("not really ciphertext"),
	})
	block := func(typ string, b []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}) }

	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"PKCS#1", pkcs1, true},
		{"PKCS#8", pkcs8, true},
		{"CRLF line ends", []byte(strings.ReplaceAll(string(pkcs1), "\n", "\r\n")), true},
		{"surrounding whitespace", append(append([]byte("\n  \n"), pkcs1...), "\n\n"...), true},

		{"empty", nil, false},
		{"not PEM", []byte("hello"), false},
		{"literal backslash-n (env-style)", []byte(strings.ReplaceAll(string(pkcs1), "\n", `\n`)), false},
		{"first line only", []byte(strings.SplitAfter(string(pkcs1), "\n")[0]), false},
		{"text before", append([]byte("my key:\n"), pkcs1...), false},
		{"trailing text", append(append([]byte{}, pkcs1...), "garbage"...), false},
		{"two blocks", append(append([]byte{}, pkcs1...), pkcs8...), false},
		{"encrypted PKCS#1", encrypted, false},
		{"encrypted PKCS#8", block("ENCRYPTED PRIVATE KEY", []byte("x")), false},
		{"OpenSSH", block("OPENSSH PRIVATE KEY", []byte("openssh-key-v1\x00")), false},
		{"EC PKCS#8", block("PRIVATE KEY", ecDER), false},
		{"EC SEC1", block("EC PRIVATE KEY", ecSEC), false},
		{"public key", block("PUBLIC KEY", []byte("x")), false},
		{"certificate", block("CERTIFICATE", []byte("x")), false},
		{"corrupt PKCS#1", block("RSA PRIVATE KEY", []byte("corrupt")), false},
		{"corrupt PKCS#8", block("PRIVATE KEY", []byte("corrupt")), false},
		{"1024-bit RSA", block("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(small)), false},
		{"oversized", append(append([]byte{}, pkcs1...), strings.Repeat(" ", 70000)...), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := github.ParseAppKey(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseAppKey = %v, want ok=%v", err, tt.ok)
			}
			if err != nil {
				wantCode(t, err, "provider_unconfigured")
				if got != nil {
					t.Error("key != nil on error")
				}
				// The error describes the problem; it never quotes the key.
				if strings.Contains(err.Error(), "MII") || len(err.Error()) > 200 {
					t.Errorf("error may quote the input: %q", err)
				}
				return
			}
			if !got.Equal(key) {
				t.Error("parsed key differs from the original")
			}
		})
	}
}
