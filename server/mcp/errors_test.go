package mcp

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestErrorCodesUniqueAndDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range publicCodes {
		if seen[c] {
			t.Errorf("code %q listed twice", c)
		}
		seen[c] = true
		n := 0
		for _, line := range strings.Split(string(readme), "\n") {
			cells := strings.Split(line, " | ")
			if strings.HasPrefix(line, "| `") && slices.Contains(strings.Split(strings.TrimPrefix(cells[0], "| "), ", "), "`"+c+"`") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("README's error table has %d rows for %q, want 1", n, c)
		}
	}
	for _, e := range errorCodes {
		if !seen[e.code] {
			t.Errorf("errorCodes maps to %q, which is not in publicCodes", e.code)
		}
	}
	// Every literal code raised in this package is public.
	files, _ := filepath.Glob("*.go")
	raised := regexp.MustCompile(`newCoded\("([a-z_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, _ := os.ReadFile(f)
		for _, m := range raised.FindAllStringSubmatch(string(src), -1) {
			if !seen[m[1]] {
				t.Errorf("%s raises %q, which is not in publicCodes", f, m[1])
			}
		}
	}
}
