package lint

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var updateMatrix = flag.Bool("update-matrix", false, "rewrite the matrix of docs/security-tests.md from the tests")

// The attack matrix's families, in the order the file lists them.
var matrixFamilies = []struct{ id, title string }{
	{"AZ", "Authorization and tenant boundary"}, {"OA", "OAuth authorization server"},
	{"CU", "Continuation cursor"}, {"IN", "Input validation and file types"},
	{"PF", "GitHub provider faults"}, {"DB", "Database faults"}, {"LD", "Load"},
	{"LG", "Logging"}, {"CR", "Cryptography"}, {"LC", "Administrator lifecycle (offboarding)"},
	{"LT", "Legacy tokens at offboarding"}, {"AR", "Audit retention"},
	{"BT", "Fairness, bounded storage, the browser flow and the pieces between"},
	{"CM", "Client ID Metadata Documents"}, {"TP", "Production topology"},
	{"VC", "Limits that cannot be spent for someone else"}, {"AS", "The audited read and GitHub's decoding"},
	{"AU", "Audit of reads"}, {"JK", "Junk costs nothing"}, {"MP", "A smaller surface"},
}

var (
	rowInName    = regexp.MustCompile(`^(?:Test|Fuzz|Benchmark)([A-Z]{2})(\d{2})([a-z]?)(?:to(\d{2}))?(?:[A-Z_]|$)`)
	rowInComment = regexp.MustCompile(`Rows? ((?:[A-Z]{2}-\d{2}[a-z]?(?:, | and )?)+)`)
	rowID        = regexp.MustCompile(`[A-Z]{2}-\d{2}[a-z]?`)
)

type matrixTest struct {
	name, file, doc string
}

// matrixRows finds the rows each test carries: in its name (TestAZ02…,
// TestCU01to04…) or in a "Row XX-NN" comment of its doc comment or body.
func matrixRows(t *testing.T) map[string][]matrixTest {
	t.Helper()
	rows := map[string][]matrixTest{}
	fset := token.NewFileSet()
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if d.IsDir() && path != "." && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !regexp.MustCompile(`^(Test|Fuzz|Benchmark)`).MatchString(fd.Name.Name) {
				continue
			}
			found := map[string]bool{}
			if m := rowInName.FindStringSubmatch(fd.Name.Name); m != nil {
				from, _ := strconv.Atoi(m[2])
				to := from
				if m[4] != "" {
					to, _ = strconv.Atoi(m[4])
				}
				for i := from; i <= to; i++ {
					found[fmt.Sprintf("%s-%02d%s", m[1], i, m[3])] = true
				}
			}
			for _, cg := range f.Comments {
				if cg != fd.Doc && (cg.Pos() < fd.Pos() || cg.Pos() > fd.End()) {
					continue
				}
				for _, m := range rowInComment.FindAllStringSubmatch(cg.Text(), -1) {
					for _, id := range rowID.FindAllString(m[1], -1) {
						found[id] = true
					}
				}
			}
			doc := ""
			if fd.Doc != nil {
				doc = fd.Doc.Text()
			}
			for id := range found {
				rows[id] = append(rows[id], matrixTest{fd.Name.Name, path, doc})
			}
		}
		return nil
	})
	return rows
}

// firstSentence is what a test's doc comment says first, without the
// test's name and row labels, cut at about 100 bytes.
func firstSentence(doc, name string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	doc = strings.TrimPrefix(doc, name)
	doc = regexp.MustCompile(`^[ :,]*(?:Rows? [A-Z]{2}-\d{2}[a-z]?(?:, [A-Z]{2}-\d{2}[a-z]?)*(?: \([^)]*\))?[.:]? ?)?`).ReplaceAllString(doc, "")
	if i := strings.Index(doc, ". "); i >= 0 {
		doc = doc[:i+1]
	}
	if len(doc) > 100 {
		cut := strings.LastIndex(doc[:100], " ")
		doc = doc[:cut] + " …"
	}
	return strings.ReplaceAll(doc, "|", `\|`)
}

// generatedMatrix is the matrix as docs/security-tests.md holds it between
// its markers: one table a family, one line a row, its tests in file order,
// each with its package.
func generatedMatrix(t *testing.T) string {
	rows := matrixRows(t)
	var b strings.Builder
	seen := 0
	for _, fam := range matrixFamilies {
		var ids []string
		for id := range rows {
			if strings.HasPrefix(id, fam.id+"-") {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			t.Errorf("no test carries a row of the family %s", fam.id)
			continue
		}
		slices.Sort(ids)
		fmt.Fprintf(&b, "\n### %s: %s\n\n| row | what its first test shows | tests (package) |\n|---|---|---|\n", fam.id, fam.title)
		for _, id := range ids {
			tests := rows[id]
			slices.SortFunc(tests, func(a, b matrixTest) int { return strings.Compare(a.file+a.name, b.file+b.name) })
			var names []string
			desc := ""
			for _, tt := range tests {
				names = append(names, fmt.Sprintf("`%s` (%s)", tt.name, filepath.ToSlash(filepath.Dir(tt.file))))
				if desc == "" && tt.doc != "" {
					desc = firstSentence(tt.doc, tt.name)
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", id, desc, strings.Join(names, ", "))
			seen++
		}
	}
	for id := range rows {
		if !slices.ContainsFunc(matrixFamilies, func(f struct{ id, title string }) bool { return strings.HasPrefix(id, f.id+"-") }) {
			t.Errorf("a test carries row %s, of no known family", id)
		}
	}
	if seen < 150 {
		t.Errorf("only %d rows carried by tests", seen)
	}
	return b.String()
}

const matrixBegin, matrixEnd = "<!-- generated by TestSecurityMatrixIsGenerated: do not edit -->\n", "<!-- end of the generated matrix -->"

// TestSecurityMatrixIsGenerated holds docs/security-tests.md's matrix equal
// to what the tests carry, so that it names only tests that exist and
// every row's tests. After adding a test that carries a row:
//
//	go test ./internal/lint -run TestSecurityMatrixIsGenerated -update-matrix
func TestSecurityMatrixIsGenerated(t *testing.T) {
	doc := mustRead(t, "docs/security-tests.md")
	i, j := strings.Index(doc, matrixBegin), strings.Index(doc, matrixEnd)
	if i < 0 || j < i {
		t.Fatal("docs/security-tests.md lacks the generated matrix's markers")
	}
	want := doc[:i+len(matrixBegin)] + generatedMatrix(t) + "\n" + doc[j:]
	if *updateMatrix {
		if err := os.WriteFile("docs/security-tests.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Error("docs/security-tests.md's matrix is stale: go test ./internal/lint -run TestSecurityMatrixIsGenerated -update-matrix")
	}
}
