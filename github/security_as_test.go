package github_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"heyaira/github"
)

// TestAS01NoBufferOutlivesItsRead holds the rule of the read path: no
// buffer that held one read's document is handed to another (no sync.Pool
// anywhere in the package), and decoding and hashing run in the request's
// goroutine (the only goroutine the package starts is the token mint's,
// which never sees a document).
func TestAS01NoBufferOutlivesItsRead(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "sync" && n.Sel.Name == "Pool" {
					t.Errorf("%s: sync.Pool: a pooled buffer would carry one read's bytes to another", fset.Position(n.Pos()))
				}
			case *ast.GoStmt:
				if sel, ok := n.Call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "runMint" {
					t.Errorf("%s: a goroutine outside the token mint: decoding and hashing run in the request's goroutine", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}

// TestAS01FileKeepsItsContent reads two large files one after the other:
// the first read's content is the caller's, and the second read neither
// zeroes nor reuses it.
func TestAS01FileKeepsItsContent(t *testing.T) {
	t.Parallel()
	srv, c, b := setup(t)
	one := []byte(strings.Repeat("first document line\n", github.MaxFileSize/20))
	two := []byte(strings.Repeat("SECOND DOCUMENT LINE\n", github.MaxFileSize/21))
	srv.AddFile("octo", "docs", commit, "one.md", one)
	srv.AddFile("octo", "docs", commit, "two.md", two)
	f1, err := c.GetFile(t.Context(), b, "one.md", commit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetFile(t.Context(), b, "two.md", commit); err != nil {
		t.Fatal(err)
	}
	if string(f1.Content) != string(one) {
		t.Fatal("the first file's content changed after the second read")
	}
}
