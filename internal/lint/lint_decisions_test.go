package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDecisionsNameRealTests keeps docs/design.md's "Decisions" table
// honest: every test it names must exist.
func TestDecisionsNameRealTests(t *testing.T) {
	t.Parallel()
	design, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(design)
	if i := strings.Index(section, "## Decisions"); i >= 0 {
		section = section[i:]
	} else {
		t.Fatal("docs/design.md has no Decisions section")
	}
	if i := strings.Index(section[3:], "\n## "); i >= 0 {
		section = section[:i+3]
	}
	var sources strings.Builder
	filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, _ := os.ReadFile(path)
			sources.Write(b)
		}
		return nil
	})
	names := regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(section, -1)
	if len(names) < 10 {
		t.Fatalf("found only %d test names in the Decisions section", len(names))
	}
	for _, m := range names {
		if !strings.Contains(sources.String(), "func "+m[1]+"(") {
			t.Errorf("docs/design.md's Decisions name %s, which does not exist", m[1])
		}
	}
}
