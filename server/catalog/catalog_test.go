package catalog

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBuiltinCatalogComplete checks that every profile has its four texts,
// that the embedded files hold nothing else, and that the texts stay small.
func TestBuiltinCatalogComplete(t *testing.T) {
	t.Parallel()
	want := []string{"builtin/core.md", "builtin/mode-verifier.md", "builtin/mode-worker.md"}
	for _, p := range Profiles() {
		if !regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`).MatchString(p.Name) {
			t.Errorf("profile name %q would not match document_sources.profile", p.Name)
		}
		if p.Title == "" || p.Description == "" {
			t.Errorf("profile %s lacks a title or description", p.Name)
		}
		for _, l := range profileLayers {
			want = append(want, "profiles/"+p.Name+"/"+l+".md")
		}
	}
	var got []string
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() {
			return nil
		}
		got = append(got, p)
		b, _ := fs.ReadFile(files, p)
		switch {
		case len(b) == 0 || len(b) > 4096:
			t.Errorf("%s is %d bytes; keep built-in texts between 1 byte and 4 KiB", p, len(b))
		case !utf8.Valid(b):
			t.Errorf("%s is not UTF-8", p)
		case strings.Contains(string(b), "\n## "):
			t.Errorf("%s holds a level-2 heading, which would read as an assembly heading", p)
		}
		return nil
	})
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("embedded files = %v, want %v", got, want)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	if p, ok := Lookup("engineer"); !ok || p.Title != "Engineer" {
		t.Errorf("Lookup(engineer) = %+v, %v", p, ok)
	}
	if _, ok := Lookup("Engineer"); ok {
		t.Error("Lookup is case-insensitive; profile names are exact")
	}
	if BuiltinLayers("nobody") != nil {
		t.Error("BuiltinLayers of an unknown profile is not nil")
	}
	for _, name := range []string{"core", "mode:worker", "mode:verifier"} {
		if l, ok := BuiltinAccountLayer(name); !ok || l.Source != SourceBuiltin || l.CommitSHA != nil || l.Text == "" {
			t.Errorf("BuiltinAccountLayer(%q) = %+v, %v", name, l, ok)
		}
	}
	if _, ok := BuiltinAccountLayer("soul"); ok {
		t.Error("BuiltinAccountLayer accepts a non-account layer")
	}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	d := Digest()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(d) || d != Digest() {
		t.Errorf("Digest() = %q, not a stable SHA-256", d)
	}
}

func TestProfilesIsACopy(t *testing.T) {
	t.Parallel()
	p := Profiles()
	p[0].Name = "mutated"
	if Profiles()[0].Name == "mutated" {
		t.Error("Profiles exposes the catalog's own slice")
	}
}
