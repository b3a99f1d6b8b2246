package githubtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"heyaira/github"
)

// The fake's object store. Owners and repository names are matched
// case-insensitively, as GitHub does; paths, commits and branches exactly.
type repoInfo struct {
	id           int64
	installation int64
	owner, name  string
}

type objKey struct{ owner, repo, commit, path string }

type branchKey struct{ owner, repo, branch string }

type state struct {
	repos         map[string]*repoInfo // "owner/repo", lowercased
	installations map[string]int64     // lowercased owner → installation ID
	nextRepoID    int64
	nextInstID    int64
	objects       map[objKey][]byte // pre-encoded contents answers
	branches      map[branchKey]string
}

func (st *state) init() {
	st.repos = make(map[string]*repoInfo)
	st.installations = make(map[string]int64)
	st.objects = make(map[objKey][]byte)
	st.branches = make(map[branchKey]string)
	st.nextRepoID = 500000
	st.nextInstID = 1000
}

// repoLocked returns the repository, creating it (and its owner's
// installation) on first use; s.mu must be held.
func (s *Server) repoLocked(owner, repo string) *repoInfo {
	k := strings.ToLower(owner + "/" + repo)
	if ri, ok := s.repos[k]; ok {
		return ri
	}
	inst, ok := s.installations[strings.ToLower(owner)]
	if !ok {
		s.nextInstID++
		inst = s.nextInstID
		s.installations[strings.ToLower(owner)] = inst
	}
	s.nextRepoID++
	ri := &repoInfo{id: s.nextRepoID, installation: inst, owner: owner, name: repo}
	s.repos[k] = ri
	return ri
}

// Binding returns the binding for owner/repo with its installation ID and
// RepositoryID 0 (tokens minted by name), creating the repository if needed.
func (s *Server) Binding(owner, repo string) github.Binding {
	s.mu.Lock()
	defer s.mu.Unlock()
	ri := s.repoLocked(owner, repo)
	return github.Binding{Owner: owner, Repo: repo, InstallationID: ri.installation}
}

// RepositoryID returns owner/repo's numeric ID, creating it if needed.
func (s *Server) RepositoryID(owner, repo string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repoLocked(owner, repo).id
}

// AddFile stores a regular file at commit, served as GitHub does: base64 in
// 60-character lines, null content when empty, the git blob SHA-1.
func (s *Server) AddFile(owner, repo, commit, path string, content []byte) {
	s.AddObject(owner, repo, commit, path, s.FileObject(owner, repo, commit, path, content))
}

// FileObject returns the contents object AddFile would serve, for a test to
// alter (a lying size, another path, a wrong sha) and store with AddObject.
func (s *Server) FileObject(owner, repo, commit, path string, content []byte) map[string]any {
	obj := s.common(owner, repo, commit, path, "file", len(content), BlobSHA(content))
	obj["encoding"] = "base64"
	obj["content"] = nil
	if len(content) > 0 {
		obj["content"] = wrap60(content)
	}
	return obj
}

// AddDir stores a directory listing the given entry names (as files).
func (s *Server) AddDir(owner, repo, commit, path string, entries ...string) {
	obj := s.common(owner, repo, commit, path, "dir", 0, BlobSHA([]byte(path)))
	list := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		list = append(list, s.common(owner, repo, commit, path+"/"+e, "file", 0, BlobSHA(nil)))
	}
	obj["entries"] = list
	s.AddObject(owner, repo, commit, path, obj)
}

// AddSymlink stores a symlink to target that GitHub does not follow (a
// target outside the repository, or not a regular file).
func (s *Server) AddSymlink(owner, repo, commit, path, target string) {
	obj := s.common(owner, repo, commit, path, "symlink", len(target), BlobSHA([]byte(target)))
	obj["target"] = target
	s.AddObject(owner, repo, commit, path, obj)
}

// AddSubmodule stores a submodule (gitlink) pointing at subCommit of gitURL.
func (s *Server) AddSubmodule(owner, repo, commit, path, gitURL, subCommit string) {
	obj := s.common(owner, repo, commit, path, "submodule", 0, subCommit)
	obj["submodule_git_url"] = gitURL
	obj["download_url"] = nil
	s.AddObject(owner, repo, commit, path, obj)
}

// AddFollowedSymlink stores what GitHub answers for a symlink to an in-repo
// file, in the shape seen in github-mcp-server's fixtures: type "file", the
// requested path, the link's own blob SHA, and the target's content.
func (s *Server) AddFollowedSymlink(owner, repo, commit, path, target string, targetContent []byte) {
	obj := s.FileObject(owner, repo, commit, path, targetContent)
	obj["sha"] = BlobSHA([]byte(target))
	s.AddObject(owner, repo, commit, path, obj)
}

// AddObject stores obj as the JSON answer for path at commit.
func (s *Server) AddObject(owner, repo, commit, path string, obj map[string]any) {
	body, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("githubtest: AddObject: %v", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, repo)
	s.objects[objKey{strings.ToLower(owner), strings.ToLower(repo), commit, path}] = body
}

// SetBranch points branch at commit.
func (s *Server) SetBranch(owner, repo, branch, commit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, repo)
	s.branches[branchKey{strings.ToLower(owner), strings.ToLower(repo), branch}] = commit
}

func (s *Server) common(owner, repo, commit, path, typ string, size int, sha string) map[string]any {
	name := path[strings.LastIndex(path, "/")+1:]
	api := "https://api.github.com/repos/" + owner + "/" + repo
	self := api + "/contents/" + path + "?ref=" + commit
	html := "https://github.com/" + owner + "/" + repo + "/blob/" + commit + "/" + path
	git := api + "/git/blobs/" + sha
	return map[string]any{
		"type": typ, "size": size, "name": name, "path": path, "sha": sha,
		"url": self, "git_url": git, "html_url": html,
		// Private repositories get a credentialed download URL; the client
		// must never fetch or log it.
		"download_url": "https://raw.githubusercontent.com/" + owner + "/" + repo + "/" + commit + "/" + path + "?token=" + s.downloadToken,
		"_links":       map[string]any{"self": self, "git": git, "html": html},
	}
}

// wrap60 is GitHub's content encoding: base64 in lines of 60 characters,
// each ending in a newline.
func wrap60(b []byte) string {
	enc := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	sb.Grow(len(enc) + len(enc)/60 + 1)
	for len(enc) > 60 {
		sb.WriteString(enc[:60])
		sb.WriteByte('\n')
		enc = enc[60:]
	}
	sb.WriteString(enc)
	sb.WriteByte('\n')
	return sb.String()
}

// BlobSHA is git's blob object ID for data.
func BlobSHA(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// splitEscaped unescapes each '/'-separated segment; it refuses a segment
// that is empty, "." or "..", or hides a '/' (%2F), as GitHub would not find
// such a path.
func splitEscaped(segs []string) ([]string, bool) {
	out := make([]string, len(segs))
	for i, e := range segs {
		u, err := url.PathUnescape(e)
		if err != nil || u == "" || u == "." || u == ".." || strings.Contains(u, "/") {
			return nil, false
		}
		out[i] = u
	}
	return out, true
}

// checkHeaders applies the header rules every API request must meet.
func checkHeaders(w http.ResponseWriter, r *http.Request, accept string) bool {
	switch {
	case r.Header.Get("User-Agent") == "":
		writeError(w, http.StatusForbidden, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header")
	case r.Header.Get("X-GitHub-Api-Version") != "2022-11-28":
		writeError(w, http.StatusBadRequest, "fake: X-GitHub-Api-Version 2022-11-28 required")
	case r.Header.Get("Accept") != accept:
		writeError(w, http.StatusUnsupportedMediaType, "fake: Accept "+accept+" required")
	default:
		return true
	}
	return false
}

func (s *Server) serveContents(w http.ResponseWriter, r *http.Request, escaped string) {
	seg := strings.Split(escaped, "/") // "", "repos", owner, repo, "contents", path...
	parts, ok := splitEscaped(seg[2:4])
	pathSegs, ok2 := splitEscaped(seg[5:])
	if !ok || !ok2 {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if !checkHeaders(w, r, "application/vnd.github.object+json") {
		return
	}
	commit, found := strings.CutPrefix(r.URL.RawQuery, "ref=")
	if !found || github.ValidateCommitSHA(commit) != nil {
		writeError(w, http.StatusBadRequest, "fake: exactly ref=<40-hex commit> required")
		return
	}
	if !s.authorizeRepo(w, r, parts[0], parts[1]) {
		return
	}
	s.mu.Lock()
	body, ok := s.objects[objKey{strings.ToLower(parts[0]), strings.ToLower(parts[1]), commit, strings.Join(pathSegs, "/")}]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) serveRef(w http.ResponseWriter, r *http.Request, escaped string) {
	seg := strings.Split(escaped, "/") // "", "repos", owner, repo, "git", "ref", "heads", branch...
	parts, ok := splitEscaped(seg[2:4])
	branchSegs, ok2 := splitEscaped(seg[7:])
	if !ok || !ok2 || r.URL.RawQuery != "" {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if !checkHeaders(w, r, "application/vnd.github+json") || !s.authorizeRepo(w, r, parts[0], parts[1]) {
		return
	}
	branch := strings.Join(branchSegs, "/")
	s.mu.Lock()
	commit, ok := s.branches[branchKey{strings.ToLower(parts[0]), strings.ToLower(parts[1]), branch}]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	api := "https://api.github.com/repos/" + parts[0] + "/" + parts[1]
	body, _ := json.Marshal(map[string]any{
		"ref": "refs/heads/" + branch, "node_id": "REF_fake", "url": api + "/git/refs/heads/" + branch,
		"object": map[string]any{"type": "commit", "sha": commit, "url": api + "/git/commits/" + commit},
	})
	writeJSON(w, http.StatusOK, body)
}

// writeJSON writes a JSON answer with an exact Content-Length and the rate
// limit headers GitHub sends, unless a fault already set them.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	for _, kv := range [][2]string{{"X-RateLimit-Limit", "5000"}, {"X-RateLimit-Remaining", "4999"}, {"X-RateLimit-Resource", "core"}} {
		if h.Get(kv[0]) == "" {
			h.Set(kv[0], kv[1])
		}
	}
	w.WriteHeader(status)
	w.Write(body)
}

// writeError writes GitHub's error body shape.
func writeError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(map[string]any{
		"message": msg, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(status),
	})
	writeJSON(w, status, body)
}
