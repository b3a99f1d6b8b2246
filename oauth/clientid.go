package oauth

import (
	"encoding/hex"
	"strings"
	"time"
)

// The client_id that dynamic registration assigns is the client's row id
// sealed as a secret is (minted.go), without an expiry: a made-up client_id
// names no row and costs no lookup.

// ClientID returns the public client_id of the registered client whose row
// id is the UUID id.
func (s *Secrets) ClientID(id string) string {
	b, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(b) != uuidLen {
		panic("oauth: ClientID of a malformed UUID")
	}
	return s.seal(PrefixClient, b, time.Time{})
}

// ClientRow returns the row id a public client_id names, or ok=false when
// this server never assigned it.
func (s *Secrets) ClientRow(clientID string) (id string, ok bool) {
	b, ok := s.open(clientID, PrefixClient, uuidLen, time.Time{})
	if !ok {
		return "", false
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}
