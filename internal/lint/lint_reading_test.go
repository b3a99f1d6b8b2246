package lint

import (
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readingBudget bounds the reviewer's reading order of a document read
// (docs/audit.md (reading order)): the files a valid read runs through, from the
// request to the answer.
const readingBudget = 3000

// TestReadingOrderIsTrue keeps docs/audit.md (reading order) true: each row's line
// count is the sum of its files' lines as they are, the total is the sum of
// the steps, and the steps fit readingBudget. A file that grows, moves or
// goes fails here until the table says so.
func TestReadingOrderIsTrue(t *testing.T) {
	t.Parallel()
	section := auditSection(t, "## Reading order")
	row := regexp.MustCompile("(?m)^\\| ([^|]+) \\| ([^|]+) \\| ([0-9,]+) \\|$")
	steps, total, stated := 0, 0, -1
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		n, _ := strconv.Atoi(strings.ReplaceAll(m[3], ",", ""))
		if strings.Contains(m[1], "total") {
			stated = n
			continue
		}
		sum := filesLines(t, m[2])
		if sum != n {
			t.Errorf("docs/audit.md (reading order), %q: %d lines stated, the files have %d", strings.TrimSpace(m[1]), n, sum)
		}
		if strings.HasPrefix(strings.TrimSpace(m[1]), "beside:") {
			continue // the failure and credential paths, listed apart
		}
		steps++
		total += sum
	}
	if steps < 8 {
		t.Fatalf("found %d steps in docs/audit.md (reading order), want the 8 from request to answer", steps)
	}
	if stated != total {
		t.Errorf("docs/audit.md (reading order) states a total of %d lines; the steps sum to %d", stated, total)
	}
	if total > readingBudget {
		t.Errorf("the reading order is %d lines, over its budget of %d", total, readingBudget)
	}
}

// surfaceBudgets bound the tables of docs/audit.md (audit surface) that have one.
var surfaceBudgets = map[string]int{"Before authentication": 1000}

// ownCodeBudget is what the own code linked into the binary may not grow
// past (docs/audit.md (audit surface)).
const ownCodeBudget = 12436

// TestAuditSurfaceIsTrue keeps docs/audit.md (audit surface) true: the own code
// linked into the binary and lib/pq's, counted as the section says, and
// each table's rows and total, counted as §15's.
func TestAuditSurfaceIsTrue(t *testing.T) {
	t.Parallel()
	section := auditSection(t, "## Audit surface")
	own, pq := linkedCodeLines(t)
	stated := regexp.MustCompile(`Own code linked into the binary: ([0-9,]+) lines\*\* \(lib/pq, the one dependency linked:\s+([0-9,]+)\)`).
		FindStringSubmatch(section)
	if stated == nil {
		t.Fatal("docs/audit.md (audit surface) does not state the own code linked into the binary")
	}
	if n := atoi(stated[1]); n != own {
		t.Errorf("docs/audit.md (audit surface) states %d own code lines linked into the binary; there are %d", n, own)
	}
	if n := atoi(stated[2]); n != pq {
		t.Errorf("docs/audit.md (audit surface) states %d lines of lib/pq; there are %d", n, pq)
	}
	if own > ownCodeBudget {
		t.Errorf("%d own code lines linked into the binary, over %d", own, ownCodeBudget)
	}
	tables := strings.Split(section, "\n### ")[1:]
	if len(tables) < 4 {
		t.Fatalf("docs/audit.md (audit surface) has %d tables, want before authentication, the authorization server, egress and secrets", len(tables))
	}
	row := regexp.MustCompile("(?m)^\\| ([^|]+) \\| ([0-9,]+) \\|$")
	for _, table := range tables {
		name, _, _ := strings.Cut(table, "\n")
		total, stated := 0, -1
		for _, m := range row.FindAllStringSubmatch(table, -1) {
			n := atoi(m[2])
			if strings.Contains(m[1], "total") {
				stated = n
				continue
			}
			sum := filesLines(t, m[1])
			if sum != n {
				t.Errorf("docs/audit.md (audit surface) %s, %s: %d lines stated, the files have %d", name, m[1], n, sum)
			}
			total += sum
		}
		if stated != total {
			t.Errorf("docs/audit.md (audit surface) %s states a total of %d lines; its rows sum to %d", name, stated, total)
		}
		if budget, ok := surfaceBudgets[name]; ok && total > budget {
			t.Errorf("docs/audit.md (audit surface) %s: %d lines, over its budget of %d", name, total, budget)
		}
	}
}

// auditSection is the section of docs/audit.md that starts with heading.
func auditSection(t *testing.T, heading string) string {
	t.Helper()
	doc := mustRead(t, "docs/audit.md")
	i := strings.Index(doc, heading)
	if i < 0 {
		t.Fatalf("docs/audit.md has no %q", heading)
	}
	section := doc[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	return section
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}

// linkedCodeLines counts the non-blank lines holding code (not only a
// comment) of the non-test files of every package the binary links: the
// module's own, and lib/pq's.
func linkedCodeLines(t *testing.T) (own, pq int) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .GoFiles \",\"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p := strings.SplitN(line, "|", 3)
		mine := p[0] == "heyaira" || strings.HasPrefix(p[0], "heyaira/")
		if !mine && !strings.HasPrefix(p[0], "github.com/lib/pq") {
			continue
		}
		for _, f := range strings.Split(p[2], ",") {
			if f == "" {
				continue
			}
			n := codeLines(t, filepath.Join(p[1], f))
			if mine {
				own += n
			} else {
				pq += n
			}
		}
	}
	return own, pq
}

// codeLines counts the non-blank lines of a Go file on which a token other
// than a comment stands or continues (a multi-line string's lines count).
func codeLines(t *testing.T, path string) int {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f := fset.AddFile(path, -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, 0) // comments are skipped
	lines := map[int]bool{}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // inserted at a line's end
		}
		end := pos
		if lit != "" {
			end = pos + token.Pos(len(lit)-1)
		}
		for l := f.Line(pos); l <= f.Line(end); l++ {
			lines[l] = true
		}
	}
	text := strings.Split(string(src), "\n")
	n := 0
	for l := range lines {
		if strings.TrimSpace(text[l-1]) != "" {
			n++
		}
	}
	return n
}

// filesLines is the number of lines of the Go files a table cell names.
func filesLines(t *testing.T, cell string) int {
	t.Helper()
	sum := 0
	for _, f := range regexp.MustCompile("`([a-z/_]+\\.go)`").FindAllStringSubmatch(cell, -1) {
		sum += strings.Count(mustRead(t, f[1]), "\n")
	}
	return sum
}
