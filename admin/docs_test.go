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
// command of docs/design.md §5 verbatim and names every document-source command.
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
