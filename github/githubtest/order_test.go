package githubtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"heyaira/github/githubtest"
)

// TestAddFileInGitHubOrder checks that the answer lists its members in
// GitHub's order, content last, and is the same file the client reads from
// AddFile's sorted answer.
func TestAddFileInGitHubOrder(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c := srv.Client()
	content := bytes.Repeat([]byte("ordered é\n"), 5000)
	srv.AddFileInGitHubOrder("octo", "docs", commit, "a.md", content)
	srv.AddFile("octo", "docs", commit, "b.md", content)
	b := srv.Binding("octo", "docs")
	for _, p := range []string{"a.md", "b.md"} {
		f, err := c.GetFile(t.Context(), b, p, commit)
		if err != nil || !bytes.Equal(f.Content, content) {
			t.Fatalf("%s: %v", p, err)
		}
	}
	tok := srv.IssuedTokens()[0]
	req, _ := http.NewRequest("GET", srv.URL()+"/repos/octo/docs/contents/a.md?ref="+commit, nil)
	req.Header.Set("Accept", "application/vnd.github.object+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "test")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := srv.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.Token()
	var names []string
	for dec.More() {
		tok, _ := dec.Token()
		names = append(names, tok.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want := []string{"type", "encoding", "size", "name", "path", "sha", "url", "git_url", "html_url", "download_url", "_links", "content"}
	if len(names) != len(want) {
		t.Fatalf("members %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("members %v, want %v", names, want)
		}
	}
}
