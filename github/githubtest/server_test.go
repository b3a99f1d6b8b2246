package githubtest_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"heyaira/github/githubtest"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

// jwt signs a JWT with the given header and claims JSON.
func jwt(t *testing.T, key *rsa.PrivateKey, header, claims string) string {
	t.Helper()
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func claims(iat, exp int64, iss string) string {
	return `{"iat":` + strconv.FormatInt(iat, 10) + `,"exp":` + strconv.FormatInt(exp, 10) + `,"iss":"` + iss + `"}`
}

// do sends one request to the fake with the headers the client sends.
func do(t *testing.T, s *githubtest.Server, method, path, auth, accept, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "test")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func mintPath(inst int64) string {
	return "/app/installations/" + strconv.FormatInt(inst, 10) + "/access_tokens"
}

const okBody = `{"repositories":["docs"],"permissions":{"contents":"read"}}`

func TestFakeVerifiesJWT(t *testing.T) {
	t.Parallel()
	s := githubtest.New(t)
	inst := s.Binding("octo", "docs").InstallationID
	now := s.Clock().Now().Unix()
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs256 := `{"alg":"RS256","typ":"JWT"}`
	good := claims(now-60, now+300, githubtest.AppID)
	tests := []struct {
		name string
		tok  string
		want int
	}{
		{"valid", jwt(t, githubtest.Key(), rs256, good), 201},
		{"numeric iss", jwt(t, githubtest.Key(), rs256, `{"iat":`+strconv.FormatInt(now-60, 10)+`,"exp":`+strconv.FormatInt(now+300, 10)+`,"iss":`+githubtest.AppID+`}`), 201},
		{"other key", jwt(t, other, rs256, good), 401},
		{"alg none", jwt(t, githubtest.Key(), `{"alg":"none"}`, good), 401},
		{"alg HS256", jwt(t, githubtest.Key(), `{"alg":"HS256","typ":"JWT"}`, good), 401},
		{"fractional iat", jwt(t, githubtest.Key(), rs256, `{"iat":`+strconv.FormatInt(now-60, 10)+`.5,"exp":`+strconv.FormatInt(now+300, 10)+`,"iss":"`+githubtest.AppID+`"}`), 401},
		{"iat in the future", jwt(t, githubtest.Key(), rs256, claims(now+30, now+300, githubtest.AppID)), 401},
		{"expired", jwt(t, githubtest.Key(), rs256, claims(now-700, now-1, githubtest.AppID)), 401},
		{"exp over 10 minutes ahead", jwt(t, githubtest.Key(), rs256, claims(now-60, now+601, githubtest.AppID)), 401},
		{"other App", jwt(t, githubtest.Key(), rs256, claims(now-60, now+300, "1")), 401},
		{"garbage", "a.b.c", 401},
		{"none", "", 401},
	}
	failures := 0
	for _, tt := range tests {
		auth := ""
		if tt.tok != "" {
			auth = "Bearer " + tt.tok
		}
		got, body := do(t, s, "POST", mintPath(inst), auth, "application/vnd.github+json", okBody)
		if got != tt.want {
			t.Errorf("%s: status %d (%s), want %d", tt.name, got, body, tt.want)
		}
		if tt.want == 401 {
			failures++
		}
	}
	if n := s.JWTFailures(); n != failures {
		t.Errorf("JWTFailures = %d, want %d", n, failures)
	}
}

// Row PF-08 (docs/security-tests.md).
func TestFakeMintRules(t *testing.T) {
	t.Parallel()
	s := githubtest.New(t)
	inst := s.Binding("octo", "docs").InstallationID
	s.Binding("elsewhere", "x")
	now := s.Clock().Now().Unix()
	auth := "Bearer " + jwt(t, githubtest.Key(), `{"alg":"RS256","typ":"JWT"}`, claims(now-60, now+300, githubtest.AppID))
	tests := []struct {
		name, path, body string
		want             int
	}{
		{"no list", mintPath(inst), `{"permissions":{"contents":"read"}}`, 422},
		{"empty names", mintPath(inst), `{"repositories":[],"permissions":{"contents":"read"}}`, 422},
		{"empty ids", mintPath(inst), `{"repository_ids":[],"permissions":{"contents":"read"}}`, 422},
		{"no permissions", mintPath(inst), `{"repositories":["docs"]}`, 422},
		{"write", mintPath(inst), `{"repositories":["docs"],"permissions":{"contents":"write"}}`, 422},
		{"extra permission", mintPath(inst), `{"repositories":["docs"],"permissions":{"contents":"read","issues":"read"}}`, 422},
		{"repository of another installation", mintPath(inst), `{"repositories":["x"],"permissions":{"contents":"read"}}`, 422},
		{"unknown field", mintPath(inst), `{"repositories":["docs"],"permissions":{"contents":"read"},"x":1}`, 400},
		{"unknown installation", mintPath(1), okBody, 404},
		{"case-insensitive name", mintPath(inst), `{"repositories":["DOCS"],"permissions":{"contents":"read"}}`, 201},
	}
	for _, tt := range tests {
		if got, body := do(t, s, "POST", tt.path, auth, "application/vnd.github+json", tt.body); got != tt.want {
			t.Errorf("%s: status %d (%s), want %d", tt.name, got, body, tt.want)
		}
	}
	if n := s.EmptyRepositoryLists(); n != 3 {
		t.Errorf("EmptyRepositoryLists = %d, want 3", n)
	}

	_, body := do(t, s, "POST", mintPath(inst), auth, "application/vnd.github+json", okBody)
	var resp struct {
		Token       string            `json:"token"`
		ExpiresAt   string            `json:"expires_at"`
		Permissions map[string]string `json:"permissions"`
		Selection   string            `json:"repository_selection"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	exp, err := time.Parse(time.RFC3339, resp.ExpiresAt)
	if err != nil || !exp.Equal(s.Clock().Now().Add(time.Hour)) {
		t.Errorf("expires_at %q, want now + 1 h in RFC 3339", resp.ExpiresAt)
	}
	if !strings.HasPrefix(resp.Token, "ghs_") || resp.Selection != "selected" || resp.Permissions["contents"] != "read" {
		t.Errorf("mint answer %+v", resp)
	}
}

func TestFakeTokenRules(t *testing.T) {
	t.Parallel()
	s := githubtest.New(t)
	inst := s.Binding("octo", "docs").InstallationID
	s.AddFile("octo", "docs", commit, "a.md", []byte("x"))
	s.AddFile("octo", "site", commit, "a.md", []byte("y"))
	now := s.Clock().Now().Unix()
	_, body := do(t, s, "POST", mintPath(inst), "Bearer "+jwt(t, githubtest.Key(), `{"alg":"RS256"}`, claims(now-60, now+300, githubtest.AppID)),
		"application/vnd.github+json", okBody)
	var resp struct{ Token string }
	json.Unmarshal(body, &resp)
	obj := "application/vnd.github.object+json"
	read := func(path, auth, accept string) int {
		got, _ := do(t, s, "GET", path, auth, accept, "")
		return got
	}
	docs := "/repos/octo/docs/contents/a.md?ref=" + commit
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"valid", read(docs, "Bearer "+resp.Token, obj), 200},
		{"owner case-insensitive", read("/repos/OCTO/Docs/contents/a.md?ref="+commit, "Bearer "+resp.Token, obj), 200},
		{"another repository", read("/repos/octo/site/contents/a.md?ref="+commit, "Bearer "+resp.Token, obj), 404},
		{"no token", read(docs, "", obj), 401},
		{"unknown token", read(docs, "Bearer ghs_nope", obj), 401},
		{"token scheme", read(docs, "token "+resp.Token, obj), 401},
		{"no ref", read("/repos/octo/docs/contents/a.md", "Bearer "+resp.Token, obj), 400},
		{"branch ref", read("/repos/octo/docs/contents/a.md?ref=main", "Bearer "+resp.Token, obj), 400},
		{"default media type", read(docs, "Bearer "+resp.Token, "application/vnd.github+json"), 415},
		{"dot-dot", read("/repos/octo/docs/contents/x/../a.md?ref="+commit, "Bearer "+resp.Token, obj), 404},
		{"encoded slash", read("/repos/octo/docs/contents/x%2Fa.md?ref="+commit, "Bearer "+resp.Token, obj), 404},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	s.Clock().Advance(time.Hour)
	if got := read(docs, "Bearer "+resp.Token, obj); got != 401 {
		t.Errorf("expired token: status %d, want 401", got)
	}
	s.Clock().Advance(-time.Minute)
	s.RevokeTokens()
	if got := read(docs, "Bearer "+resp.Token, obj); got != 401 {
		t.Errorf("revoked token: status %d, want 401", got)
	}
	for _, r := range s.Requests() {
		if r.Route == githubtest.RouteContents && r.HasAuthorization && r.Auth == githubtest.AuthNone {
			t.Errorf("request %+v not classified", r)
		}
	}
	if !s.SawAuthorization("Bearer "+resp.Token) || s.SawAuthorization("Bearer mcp-bearer-never-sent") {
		t.Error("SawAuthorization does not match the request log")
	}
}

// TestFakeContentsShape checks the encoding GitHub uses: base64 in
// 60-character lines, the git blob SHA-1, and null content for empty files.
func TestFakeContentsShape(t *testing.T) {
	t.Parallel()
	s := githubtest.New(t)
	content := []byte(strings.Repeat("0123456789", 10))
	obj := s.FileObject("octo", "docs", commit, "d/a.md", content)
	lines := strings.Split(obj["content"].(string), "\n")
	if diff := cmp.Diff([]int{60, 60, 16, 0}, []int{len(lines[0]), len(lines[1]), len(lines[2]), len(lines[3])}); diff != "" || len(lines) != 4 {
		t.Errorf("line lengths (-want +got):\n%s", diff)
	}
	if obj["sha"] != githubtest.BlobSHA(content) || obj["size"] != 100 || obj["path"] != "d/a.md" || obj["name"] != "a.md" {
		t.Errorf("object %v", obj)
	}
	if githubtest.BlobSHA(nil) != "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391" {
		t.Error("empty blob SHA is not git's")
	}
	if empty := s.FileObject("octo", "docs", commit, "e.md", nil); empty["content"] != nil || empty["size"] != 0 {
		t.Errorf("empty file object %v", empty)
	}
}

// TestFakeFaultQueue checks that InjectN faults apply in order and run out.
func TestFakeFaultQueue(t *testing.T) {
	t.Parallel()
	s := githubtest.New(t)
	s.InjectN(githubtest.RouteOther, 2, githubtest.Status(500, `{}`))
	s.InjectN(githubtest.RouteOther, 1, githubtest.Status(502, `{}`))
	var got []int
	for range 4 {
		code, _ := do(t, s, "GET", "/rate_limit", "", "application/json", "")
		got = append(got, code)
	}
	if diff := cmp.Diff([]int{500, 500, 502, 404}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if n := s.Count(githubtest.RouteOther); n != 4 {
		t.Errorf("Count = %d, want 4", n)
	}
}
