package admin_test

import (
	"os"
	"strings"
	"testing"

	"heyaira/admin"
)

// TestDocsAdminReference checks docs/admin.md against the command table: a
// section per command, its usage line verbatim, and every flag of its --help.
func TestDocsAdminReference(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/admin.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range admin.Commands() {
		start := strings.Index(doc, "\n### "+c.Name+"\n")
		if start < 0 {
			t.Errorf("docs/admin.md has no section ### %s", c.Name)
			continue
		}
		section := doc[start+1:]
		if end := strings.Index(section[4:], "\n## "); end >= 0 {
			section = section[:end+4]
		}
		if end := strings.Index(section[4:], "\n### "); end >= 0 {
			section = section[:end+4]
		}
		if !strings.Contains(section, "```\n"+c.Usage+"\n```") {
			t.Errorf("section %s lacks the usage line %q in a code block", c.Name, c.Usage)
		}
		help, _, _ := runWith(t, map[string]string{}, c.Name, "--help")
		for _, line := range strings.Split(help, "\n") {
			if !strings.HasPrefix(line, "  --") {
				continue
			}
			flag := strings.Fields(line)[0]
			if flag != "--json" && !strings.Contains(section, "`"+flag+"`") {
				t.Errorf("section %s does not document %s", c.Name, flag)
			}
		}
	}
}

// TestDocsDocumentSources checks that the operations guide shows the canonical
// command verbatim and names every document-source command.
func TestDocsDocumentSources(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/document-sources.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	seed := "heyaira-admin add-document-source \\\n  --project-id <project-id> \\\n  --github-owner h8v6 \\\n" +
		"  --github-repository heyaira \\\n  --document-role runtime \\\n  --path docs/CONTINUITY_PROTOCOL.md \\\n" +
		"  --commit-sha <40-character-commit-sha>"
	if !strings.Contains(doc, seed) {
		t.Error("docs/document-sources.md lacks the canonical add-document-source command verbatim")
	}
	for _, c := range []string{"link-repository", "unlink-repository", "add-document-source", "revoke-document-source",
		"list-document-sources", "add-account-source", "revoke-account-source", "list-account-sources"} {
		if !strings.Contains(doc, "heyaira-admin "+c+" ") {
			t.Errorf("docs/document-sources.md shows no %s command", c)
		}
	}
}

// TestJSONShapes: the rule of docs/admin.md "JSON shapes". Every list
// command (list-* and audit) prints an array with --json unless the doc's
// table names it, and then an object; the table names only list commands.
func TestJSONShapes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/admin.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "**JSON shapes.**")
	if start < 0 {
		t.Fatal(`docs/admin.md has no "JSON shapes" paragraph`)
	}
	objects := map[string]bool{}
	for _, line := range strings.Split(doc[start:], "\n\n")[1:2] {
		for _, row := range strings.Split(line, "\n")[2:] {
			if name, ok := strings.CutPrefix(row, "| `"); ok {
				objects[name[:strings.Index(name, "`")]] = true
			}
		}
	}
	if len(objects) == 0 {
		t.Fatal("the JSON shapes table lists no command")
	}
	h := newHarness(t)
	f := h.fixture()
	flags := map[string][]string{"list-principals": {"--account-id", f.account}, "list-account-sources": {"--account-id", f.account},
		"list-members": {"--project-id", f.project}, "list-document-sources": {"--project-id", f.project},
		"list-grants": {"--project-id", f.project}, "audit": {"--project-id", f.project}}
	checked := 0
	for _, c := range admin.Commands() {
		if !strings.HasPrefix(c.Name, "list-") && c.Name != "audit" {
			if objects[c.Name] {
				t.Errorf("the JSON shapes table names %s, which is not a list command", c.Name)
			}
			continue
		}
		checked++
		out := strings.TrimSpace(h.must(append(append([]string{c.Name}, flags[c.Name]...), "--json")...))
		if got, want := out[:1], map[bool]string{true: "{", false: "["}[objects[c.Name]]; got != want {
			t.Errorf("%s --json starts with %q, want %q (docs/admin.md, JSON shapes)", c.Name, got, want)
		}
		delete(objects, c.Name)
	}
	for name := range objects {
		t.Errorf("the JSON shapes table names %s, which is not a command", name)
	}
	if checked < 8 {
		t.Errorf("checked %d list commands, want at least 8", checked)
	}
}
