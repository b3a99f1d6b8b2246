package systemtest

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"heyaira/github/githubtest"
	"heyaira/internal/logbuf"
	"heyaira/oauth"
	"heyaira/store/storetest"
)

// TestDemoProductionBinaryReachesOnlyGitHub shows that no switch turns the
// production binary into the demo. It builds `go build .`, allowlists a
// document, and starts `heyaira serve` with every variable the demo and the
// bench helpers read, plus the usual ways to redirect a Go program's HTTP
// (proxies, GitHub-URL variables), all pointing at a local stand-in. A
// document read must still go to api.github.com and nowhere else: the
// stand-in sees no connection, and the binary's resolver (GODEBUG
// netdns=go+2) looks up api.github.com and no other name.
//
// The binary runs in a network namespace of its own (unshare -n) with only
// loopback, beside the stand-in: the lookup of api.github.com fails there at
// once, so nothing leaves the machine, while anything on loopback (the
// stand-in, the proxies) would be reachable.
// Row BT-44 (docs/security-tests.md).
func TestDemoProductionBinaryReachesOnlyGitHub(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			storetest.Missing(t, "skipped: %s is missing (util-linux, iproute2)", tool)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "heyaira")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dbURL := storetest.NewMigratedURL(t)
	env := baseEnv(t, dbURL)
	const listen = "127.0.0.1:8080" // inside the namespace, so never taken
	public := "http://" + listen
	tn := adminTenant(t, env, "Prod", "Ada")
	project, person := tn.project, tn.person
	adminRun(t, env, "link-repository", "--project-id", project, "--github-owner", githubtest.DemoOwner,
		"--github-repository", githubtest.DemoRepo, "--github-installation-id", "1001")
	source := str(t, adminRun(t, env, "add-document-source", "--project-id", project, "--github-owner", githubtest.DemoOwner,
		"--github-repository", githubtest.DemoRepo, "--document-role", "runtime", "--path", githubtest.DemoRuntime, "--commit-sha", githubtest.DemoCommit), "source_id")
	access := newToken(t, oauth.PrefixAccess, time.Hour)
	storetest.InsertAccessToken(t, dbURL, person, project, public+"/mcp", access, []string{"documents:read"})

	report := filepath.Join(dir, "report.json")
	cmd := exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up && exec "$0" "$@"`,
		os.Args[0], "-test.run=^TestDemoNetnsHelperProcess$", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), netnsHelperEnv+"=1",
		"HEYAIRA_NETNS_BINARY="+bin, "HEYAIRA_NETNS_REPORT="+report,
		"HEYAIRA_NETNS_TOKEN="+access, "HEYAIRA_NETNS_SOURCE="+source,
		"HEYAIRA_DATABASE_URL="+dbURL, "HEYAIRA_CURSOR_KEY_FILE="+env["HEYAIRA_CURSOR_KEY_FILE"],
		"HEYAIRA_LISTEN_ADDR="+listen, "HEYAIRA_PUBLIC_URL="+public,
		"HEYAIRA_GITHUB_APP_ID="+githubtest.AppID,
		"HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE="+writeFile(t, "app.pem", string(githubtest.KeyPEM()), 0o600))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the binary in its own network namespace: %v\n%s", err, out)
	}
	var r netnsReport
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	t.Logf("switches set: %s", strings.Join(r.Switches, " "))
	t.Logf("git_document_get: status %d, code %s; stand-in connections %d", r.Status, r.Code, r.StandInConnections)
	for _, v := range []string{"HEYAIRA_DEMO_HELPER", "HEYAIRA_DEMO_SEED_FILE", "HEYAIRA_BENCH_HELPER", "HEYAIRA_BENCH_GITHUB_URL",
		"HEYAIRA_BENCH_GITHUB_CA_FILE", "HTTPS_PROXY"} {
		if !slices.Contains(r.Switches, v) {
			t.Errorf("%s was not set for the binary", v)
		}
	}
	if r.StandInConnections != 0 {
		t.Errorf("the stand-in got %d connections from the production binary", r.StandInConnections)
	}
	if r.Code != "provider_unavailable" {
		t.Errorf("git_document_get with GitHub unreachable: status %d, code %q, want provider_unavailable; body %s", r.Status, r.Code, r.Body)
	}
	var hosts []string
	for _, m := range regexp.MustCompile(`hostLookupOrder\(([^)]*)\)`).FindAllStringSubmatch(r.Stderr, -1) {
		if !slices.Contains(hosts, m[1]) {
			hosts = append(hosts, m[1])
		}
	}
	if !slices.Equal(hosts, []string{"api.github.com"}) {
		t.Errorf("names the binary looked up: %q, want only api.github.com\nstderr:\n%s", hosts, r.Stderr)
	}
}

const netnsHelperEnv = "HEYAIRA_NETNS_HELPER"

// netnsReport is what TestDemoNetnsHelperProcess saw inside the namespace.
type netnsReport struct {
	Switches           []string `json:"switches"`
	StandInConnections int      `json:"standin_connections"`
	Status             int      `json:"status"`
	Code               string   `json:"code"`
	Body               string   `json:"body"`
	Stderr             string   `json:"stderr"`
}

// TestDemoNetnsHelperProcess is not a test: it is the inside of
// TestDemoProductionBinaryReachesOnlyGitHub's network namespace. It starts
// the stand-in (a listener that counts connections), runs the production
// binary with every switch pointed at it, makes one document read, and
// writes a netnsReport.
func TestDemoNetnsHelperProcess(t *testing.T) {
	if os.Getenv(netnsHelperEnv) != "1" {
		t.Skip("not a test: run by TestDemoProductionBinaryReachesOnlyGitHub in a network namespace")
	}
	standIn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer standIn.Close()
	conns := make(chan struct{}, 1000)
	go func() {
		for {
			c, err := standIn.Accept()
			if err != nil {
				return
			}
			conns <- struct{}{}
			c.Close()
		}
	}()
	url := "http://" + standIn.Addr().String()
	switches := map[string]string{
		"HEYAIRA_DEMO_HELPER": "1", "HEYAIRA_DEMO_SEED_FILE": filepath.Join(t.TempDir(), "seed.env"),
		"HEYAIRA_BENCH_HELPER": "1", "HEYAIRA_BENCH_GITHUB_URL": url + githubtest.BasePath,
		"HEYAIRA_BENCH_GITHUB_CA_FILE": os.Getenv("HEYAIRA_GITHUB_APP_PRIVATE_KEY_FILE"), // any file: it must not be read
		"HEYAIRA_GITHUB_BASE_URL":      url, "HEYAIRA_GITHUB_API_URL": url, "GITHUB_API_URL": url,
		"GH_HOST": standIn.Addr().String(), "GH_ENTERPRISE_TOKEN": "x",
		"HTTPS_PROXY": url, "https_proxy": url, "HTTP_PROXY": url, "http_proxy": url, "ALL_PROXY": url, "NO_PROXY": "",
		"GODEBUG": "netdns=go+2",
	}
	cmd := exec.Command(os.Getenv("HEYAIRA_NETNS_BINARY"), "serve")
	cmd.Env = os.Environ()
	r := netnsReport{}
	for k, v := range switches {
		cmd.Env = append(cmd.Env, k+"="+v)
		r.Switches = append(r.Switches, k)
	}
	slices.Sort(r.Switches)
	var stderr logbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	base := os.Getenv("HEYAIRA_PUBLIC_URL")
	c := newLoadClient(base)
	// A hang bound, not a target: on a loaded machine start-up can take
	// longer than the few seconds it takes alone.
	for deadline := time.Now().Add(serveHang); c.do("readyz", "GET", "/readyz", "", "").status != 200; {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the binary did not become ready in %v:\n%s", serveHang, stderr.String())
		}
		time.Sleep(100 * time.Millisecond) // back off: never a busy loop
	}
	o := c.toolCall(os.Getenv("HEYAIRA_NETNS_TOKEN"), "git_document_get", map[string]any{"source_id": os.Getenv("HEYAIRA_NETNS_SOURCE")})
	c.close()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	r.StandInConnections = len(conns)
	r.Status, r.Code, r.Body, r.Stderr = o.status, o.code, o.body, stderr.String()
	out, _ := json.Marshal(r)
	if err := os.WriteFile(os.Getenv("HEYAIRA_NETNS_REPORT"), out, 0o600); err != nil {
		t.Fatal(err)
	}
}
