package systemtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"heyaira/cursor"
	"heyaira/internal/secretfile"
)

// TestOperatingCursorKeyCommands runs docs/operating.md's cursor-key
// commands as written, in a directory standing in for /etc/heyaira (the
// restarts left out): generation, then the three rotation steps. After
// each, the key file must pass serve's checks (protected file, parsable
// keys), and the keys must be those each step promises.
func TestOperatingCursorKeyCommands(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl is missing: docs/operating.md generates keys with it")
	}
	doc, err := os.ReadFile("docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.Contains(line, "/etc/heyaira/cursor.key") && !strings.HasPrefix(line, "#") &&
			(strings.HasPrefix(line, "(umask") || strings.HasPrefix(line, "mv ")) {
			cmds = append(cmds, strings.TrimSuffix(line, " && systemctl restart heyaira"))
		}
	}
	if len(cmds) != 7 {
		t.Fatalf("found %d cursor-key commands in docs/operating.md, want 7 (generation, then 2+2+1 for rotation):\n%s",
			len(cmds), strings.Join(cmds, "\n"))
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "cursor.key")
	var steps [][]string // the key ids of cursor.key after each command
	for _, c := range cmds {
		out, err := exec.Command("bash", "-euo", "pipefail", "-c", strings.ReplaceAll(c, "/etc/heyaira", dir)).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		b, err := secretfile.Read(keyFile)
		if err != nil {
			t.Fatalf("after %s, serve refuses the key file: %v", c, err)
		}
		codec, err := cursor.ParseKeys(b)
		if err != nil {
			t.Fatalf("after %s: %v", c, err)
		}
		for _, l := range strings.Fields(string(b)) {
			if len(l) != 64 {
				t.Errorf("after %s: a key line of %d characters, want 64 (32 bytes in hex)", c, len(l))
			}
		}
		steps = append(steps, codec.KeyIDs())
	}
	first, last := steps[0], steps[len(steps)-1]
	if len(first) != 1 || len(last) != 1 || first[0] == last[0] {
		t.Fatalf("generation gave %v and rotation ended with %v: want one key each, different", first, last)
	}
	a, b := first[0], last[0]
	want := [][]string{{a}, {a}, {a}, {a, b}, {a, b}, {b, a}, {b}}
	for i := range want {
		if !slices.Equal(steps[i], want[i]) {
			t.Errorf("after %s: keys %v, want %v (a: the first key, b: the new one)", cmds[i], steps[i], want[i])
		}
	}
}
