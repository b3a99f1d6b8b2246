package systemtest

import (
	"strings"
	"testing"

	"heyaira/github/githubtest"
	"heyaira/internal/app"
	"heyaira/store/storetest"
)

// A key that parses but that GitHub refuses (401 at token mint)
// is reported by /readyz as 200 "degraded" with app_jwt_refused and by one
// ERROR line saying what to do, while reads answer provider_forbidden; a
// later successful mint (the App fixed at GitHub) clears it.
// Row PF-09 (docs/security-tests.md).
func TestAppJWTRefusedIsReported(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	s := newLiveServer(t, storetest.NewURL(t), gh, app.Hooks{}, 100)
	c := newLoadClient(s.base)
	defer c.close()
	ready := func() string { return strings.TrimSpace(c.do("readyz", "GET", "/readyz", "", "").body) }
	read := func() outcome { return c.toolCall(s.access, "git_document_get", map[string]any{"source_id": s.source}) }
	if r := ready(); r != `{"status":"ok"}` {
		t.Fatalf("/readyz before: %s", r)
	}
	gh.Inject(githubtest.RouteMint, githubtest.Status(401, `{"message":"A JSON web token could not be decoded"}`))
	for range 2 {
		if o := read(); o.code != "provider_forbidden" {
			t.Errorf("read with the JWT refused: %s, want provider_forbidden", o.code)
		}
	}
	if r := ready(); r != `{"github":"app_jwt_refused","status":"degraded"}` {
		t.Errorf("/readyz with the JWT refused: %s", r)
	}
	if n := strings.Count(s.logs.String(), `"level":"ERROR","msg":"GitHub refused the App's JWT (401 at token mint): check HEYAIRA_GITHUB_APP_ID`); n != 1 {
		t.Errorf("%d error lines about the refused JWT, want 1:\n%s", n, s.logs.String())
	}
	gh.ClearFaults()
	if o := read(); !o.ok() {
		t.Errorf("read after the fix: %s", o.code)
	}
	if r := ready(); r != `{"status":"ok"}` {
		t.Errorf("/readyz after the fix: %s", r)
	}
}
