package githubtest

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AppID is the fake App's ID.
const AppID = "424242"

// TokenLifetime is how long a minted installation token lives, as on GitHub.
const TokenLifetime = time.Hour

// maxJWTLifetime is GitHub's bound on exp − now.
const maxJWTLifetime = 10 * time.Minute

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
)

func appKey() *rsa.PrivateKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic("githubtest: generating App key: " + err.Error())
		}
		key = k
	})
	return key
}

// KeyPEM returns the App key as GitHub hands it out: a PKCS#1 PEM block.
func KeyPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(appKey())})
}

// Key returns the App's private key (the same as the package-level Key).
func (s *Server) Key() *rsa.PrivateKey { return appKey() }

// AppID returns the App's ID (the package-level AppID).
func (s *Server) AppID() string { return AppID }

// MintRequest is one accepted POST /app/installations/{id}/access_tokens.
type MintRequest struct {
	Installation  int64
	Repositories  []string          // as sent (nil when absent)
	RepositoryIDs []int64           // as sent (nil when absent)
	Permissions   map[string]string // as sent
	// IAT, EXP and ISS are the verified JWT's claims.
	IAT, EXP int64
	ISS      string
	// Now is the fake clock's reading when the JWT was checked.
	Now time.Time
}

type token struct {
	installation int64
	repoIDs      []int64
	expires      time.Time
	revoked      bool
}

type auth struct {
	tokens        map[string]*token
	issued        []string
	jwts          []string
	mints         []MintRequest
	jwtFailures   int
	emptyLists    int
	downloadToken string
}

func (a *auth) init() {
	a.tokens = make(map[string]*token)
	a.downloadToken = "dl" + randomString(24)
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// RevokeTokens revokes every token minted so far: the next request with one
// gets 401, as after a revocation or an early expiry on GitHub.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		t.revoked = true
	}
}

// IssuedTokens returns every installation token minted, for canary checks.
func (s *Server) IssuedTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// SeenJWTs returns every JWT presented to the mint endpoint, for canary checks.
func (s *Server) SeenJWTs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.jwts...)
}

// DownloadURLToken is the secret in every download_url the fake serves.
func (s *Server) DownloadURLToken() string { return s.downloadToken }

// Mints returns the accepted mint requests, oldest first.
func (s *Server) Mints() []MintRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]MintRequest(nil), s.mints...)
}

// JWTFailures counts mint requests whose JWT did not verify.
func (s *Server) JWTFailures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jwtFailures
}

// EmptyRepositoryLists counts mint requests with no repository list or an
// empty one (which on GitHub would mean every repository); the fake refuses
// them with 422.
func (s *Server) EmptyRepositoryLists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emptyLists
}

// classifyAuth says what an Authorization value is, without checking scope.
func (s *Server) classifyAuth(v string) AuthKind {
	if v == "" {
		return AuthNone
	}
	cred, ok := strings.CutPrefix(v, "Bearer ")
	if !ok {
		return AuthUnrecognized
	}
	s.mu.Lock()
	_, minted := s.tokens[cred]
	s.mu.Unlock()
	if minted {
		return AuthToken
	}
	if _, err := s.verifyJWT(cred); err == nil {
		return AuthJWT
	}
	return AuthUnrecognized
}

// authorizeRepo checks the installation token on a repository request:
// 401 when unknown, revoked or expired; 404 when it does not cover the
// repository (GitHub hides what a token cannot see).
func (s *Server) authorizeRepo(w http.ResponseWriter, r *http.Request, owner, repo string) bool {
	cred, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	t := s.tokens[cred]
	ri := s.repos[strings.ToLower(owner+"/"+repo)]
	now := s.clock.Now()
	s.mu.Unlock()
	switch {
	case !ok || t == nil || t.revoked || !now.Before(t.expires):
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return false
	case ri == nil || ri.installation != t.installation || !slices.Contains(t.repoIDs, ri.id):
		writeError(w, http.StatusNotFound, "Not Found")
		return false
	}
	return true
}

type jwtClaims struct {
	IAT, EXP int64
	ISS      string
}

// verifyJWT checks an App JWT the way GitHub does: header alg RS256 (checked
// before the key is used), a valid RS256 signature by the App key, integer
// iat and exp with iat ≤ now < exp ≤ now + 10 min, and iss = AppID.
func (s *Server) verifyJWT(tok string) (jwtClaims, error) {
	var c jwtClaims
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return c, errBadJWT
	}
	hdr, err := base64.RawURLEncoding.Strict().DecodeString(parts[0])
	if err != nil {
		return c, errBadJWT
	}
	var h struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
	}
	if json.Unmarshal(hdr, &h) != nil || h.Alg != "RS256" || (h.Typ != "" && h.Typ != "JWT") {
		return c, errBadJWT
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err != nil {
		return c, errBadJWT
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&appKey().PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return c, errBadJWT
	}
	payload, err := base64.RawURLEncoding.Strict().DecodeString(parts[1])
	if err != nil {
		return c, errBadJWT
	}
	var raw struct {
		IAT json.Number `json:"iat"`
		EXP json.Number `json:"exp"`
		ISS any         `json:"iss"`
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if dec.Decode(&raw) != nil {
		return c, errBadJWT
	}
	iat, err1 := strconv.ParseInt(string(raw.IAT), 10, 64) // rejects 1.5 and 1e9
	exp, err2 := strconv.ParseInt(string(raw.EXP), 10, 64)
	if err1 != nil || err2 != nil {
		return c, errBadJWT
	}
	switch iss := raw.ISS.(type) {
	case string:
		c.ISS = iss
	case json.Number:
		c.ISS = iss.String()
	}
	now := s.clock.Now().Unix()
	if iat > now || exp <= now || exp > now+int64(maxJWTLifetime/time.Second) || c.ISS != AppID {
		return c, errBadJWT
	}
	c.IAT, c.EXP = iat, exp
	return c, nil
}

type fakeError string

// Error implements error.
func (e fakeError) Error() string { return string(e) }

const errBadJWT = fakeError("githubtest: JWT could not be verified")

// serveMint handles POST /app/installations/{id}/access_tokens.
func (s *Server) serveMint(w http.ResponseWriter, r *http.Request, escaped string) AuthKind {
	seg := strings.Split(escaped, "/") // "", "app", "installations", id, "access_tokens"
	if !checkHeaders(w, r, "application/vnd.github+json") {
		return s.classifyAuth(r.Header.Get("Authorization"))
	}
	jwt, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	claims, err := s.verifyJWT(jwt)
	if err != nil {
		s.mu.Lock()
		s.jwtFailures++
		s.mu.Unlock()
		writeError(w, http.StatusUnauthorized, "A JSON web token could not be decoded")
		return AuthUnrecognized
	}
	inst, err := strconv.ParseInt(seg[3], 10, 64)
	s.mu.Lock()
	known := false
	for _, id := range s.installations {
		known = known || id == inst
	}
	s.mu.Unlock()
	if err != nil || !known {
		writeError(w, http.StatusNotFound, "Not Found")
		return AuthJWT
	}
	var body struct {
		Repositories  []string          `json:"repositories"`
		RepositoryIDs []int64           `json:"repository_ids"`
		Permissions   map[string]string `json:"permissions"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if r.Header.Get("Content-Type") != "application/json" || dec.Decode(&body) != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return AuthJWT
	}
	if len(body.Repositories) == 0 && len(body.RepositoryIDs) == 0 {
		s.mu.Lock()
		s.emptyLists++
		s.mu.Unlock()
		writeError(w, http.StatusUnprocessableEntity, "fake: refusing to mint a token for every repository")
		return AuthJWT
	}
	if len(body.Permissions) != 1 || body.Permissions["contents"] != "read" {
		writeError(w, http.StatusUnprocessableEntity, `fake: permissions must be exactly {"contents":"read"}`)
		return AuthJWT
	}
	out, ok := s.mintLocked(inst, body.Repositories, body.RepositoryIDs, body.Permissions, claims)
	if !ok {
		writeError(w, http.StatusUnprocessableEntity, "There is at least one repository that does not exist or is not accessible to the parent installation.")
		return AuthJWT
	}
	writeJSON(w, http.StatusCreated, out)
	return AuthJWT
}

// mintLocked records a token for the named repositories of inst and returns
// the response body; ok is false when a repository is not in inst.
func (s *Server) mintLocked(inst int64, names []string, ids []int64, perms map[string]string, claims jwtClaims) (body []byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var repos []*repoInfo
	for _, ri := range s.repos {
		byName := slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, ri.name) })
		if ri.installation == inst && (byName || slices.Contains(ids, ri.id)) {
			repos = append(repos, ri)
		}
	}
	if len(repos) != len(names)+len(ids) {
		return nil, false
	}
	now := s.clock.Now()
	value := "ghs_" + randomString(27)
	t := &token{installation: inst, expires: now.Add(TokenLifetime)}
	list := make([]map[string]any, 0, len(repos))
	for _, ri := range repos {
		t.repoIDs = append(t.repoIDs, ri.id)
		list = append(list, map[string]any{"id": ri.id, "name": ri.name, "full_name": ri.owner + "/" + ri.name, "private": true})
	}
	s.tokens[value] = t
	s.issued = append(s.issued, value)
	s.mints = append(s.mints, MintRequest{
		Installation: inst, Repositories: names, RepositoryIDs: ids,
		Permissions: perms, IAT: claims.IAT, EXP: claims.EXP, ISS: claims.ISS, Now: now,
	})
	body, _ = json.Marshal(map[string]any{
		"token": value, "expires_at": t.expires.UTC().Format(time.RFC3339),
		"permissions":          map[string]string{"contents": "read", "metadata": "read"},
		"repository_selection": "selected", "repositories": list,
	})
	return body, true
}
