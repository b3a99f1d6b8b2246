package servertest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// CommitA is the commit the tests pin their documents at.
const CommitA = "1111111111111111111111111111111111111111"

// MixedText returns about n bytes mixing 1-, 2-, 3- and 4-byte characters.
func MixedText(n int) []byte {
	unit := "plain ascii, é ü ß, € ₹ 中文, 😀 🎉 𝄞\n"
	return []byte(strings.Repeat(unit, n/len(unit)+1))
}

// HexSHA is the lower-case hex SHA-256 of b, as the tools report it.
func HexSHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
