package github

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

// JWT timing (GitHub "Generating a JSON Web Token for a GitHub App"): iat is
// set in the past to absorb clock drift between us and GitHub; exp stays well
// inside GitHub's 10-minute maximum so a clock running slightly ahead of
// GitHub's is still accepted.
const (
	jwtBackdate = 60 * time.Second
	jwtLifetime = 5 * time.Minute
)

// jwtHeader is the fixed, pre-encoded header: RS256 is the only algorithm
// GitHub accepts for App JWTs, so nothing here is negotiable.
var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))

// jwtClaims are the App JWT claims. iat and exp are int64 because GitHub
// rejects fractional times.
type jwtClaims struct {
	IAT int64  `json:"iat"`
	EXP int64  `json:"exp"`
	ISS string `json:"iss"`
}

// signAppJWT returns an RS256 JWT identifying the App: iat = now − 60 s,
// exp = now + 5 min, iss = appID (a numeric App ID or a client ID).
// PKCS #1 v1.5 signatures are deterministic, so no randomness is needed
// (nil rand), which keeps the output testable against fixed vectors.
// The result is a credential: callers never log it or put it in an error.
func signAppJWT(key *rsa.PrivateKey, appID string, now time.Time) (string, error) {
	claims, err := json.Marshal(jwtClaims{
		IAT: now.Add(-jwtBackdate).Unix(),
		EXP: now.Add(jwtLifetime).Unix(),
		ISS: appID,
	})
	if err != nil {
		return "", err
	}
	signingInput := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
