package lint

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readingBudget bounds the reviewer's reading order of a document read
// (docs/design.md §15): the files a valid read runs through, from the
// request to the answer.
const readingBudget = 3000

// TestReadingOrderIsTrue keeps docs/design.md §15 true: each row's line
// count is the sum of its files' lines as they are, the total is the sum of
// the steps, and the steps fit readingBudget. A file that grows, moves or
// goes fails here until the table says so.
func TestReadingOrderIsTrue(t *testing.T) {
	t.Parallel()
	doc := mustRead(t, "docs/design.md")
	i := strings.Index(doc, "## 15. Reading order")
	if i < 0 {
		t.Fatal("docs/design.md has no section 15, Reading order")
	}
	section := doc[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	row := regexp.MustCompile("(?m)^\\| ([^|]+) \\| ([^|]+) \\| ([0-9,]+) \\|$")
	file := regexp.MustCompile("`([a-z/_]+\\.go)`")
	steps, total, stated := 0, 0, -1
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		n, _ := strconv.Atoi(strings.ReplaceAll(m[3], ",", ""))
		if strings.Contains(m[1], "total") {
			stated = n
			continue
		}
		sum := 0
		for _, f := range file.FindAllStringSubmatch(m[2], -1) {
			sum += strings.Count(mustRead(t, f[1]), "\n")
		}
		if sum != n {
			t.Errorf("docs/design.md §15, %q: %d lines stated, the files have %d", strings.TrimSpace(m[1]), n, sum)
		}
		if strings.HasPrefix(strings.TrimSpace(m[1]), "beside:") {
			continue // the failure and credential paths, listed apart
		}
		steps++
		total += sum
	}
	if steps < 8 {
		t.Fatalf("found %d steps in docs/design.md §15, want the 8 from request to answer", steps)
	}
	if stated != total {
		t.Errorf("docs/design.md §15 states a total of %d lines; the steps sum to %d", stated, total)
	}
	if total > readingBudget {
		t.Errorf("the reading order is %d lines, over its budget of %d", total, readingBudget)
	}
}
