package lint

// Lint tests of the attack matrix, over every non-test Go file of the
// module (test helpers githubtest and storetest excluded: they are fakes):
//
//   - CR-01: MACs, hashes and secrets are compared in constant time
//     (hmac.Equal, subtle.ConstantTimeCompare, oauth.Equal), never with
//     bytes.Equal, ==, != or strings.EqualFold;
//   - CR-02: no math/rand: every secret comes from crypto/rand;
//   - PF-10: no InsecureSkipVerify: TLS to GitHub is always verified.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// productionFiles parses every non-test Go file of the module.
func productionFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", "githubtest", "storetest", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files[path] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("found only %d production files", len(files))
	}
	return fset, files
}

// secretish reports whether an expression names something that holds a
// MAC, hash, signature or secret.
func secretish(e ast.Expr) bool {
	var name string
	switch x := e.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		name = x.Sel.Name
	case *ast.IndexExpr:
		return secretish(x.X)
	case *ast.SliceExpr:
		return secretish(x.X)
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			name = sel.Sel.Name // e.g. m.Sum(nil), oauth.Hash(s)
		}
	default:
		return false
	}
	n := strings.ToLower(name)
	for _, w := range []string{"mac", "hash", "sha", "sum", "sig", "digest", "secret", "csrf", "verifier", "challenge", "token"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// harmless reports whether a comparison operand cannot be a secret's
// bytes: a literal, nil, a length, a constant-like identifier.
func harmless(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		return x.Name == "nil" || x.Name == "true" || x.Name == "false"
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "len" || id.Name == "cap") {
			return true
		}
	}
	return false
}

// Row CR-01 (lint): no variable-time comparison of a MAC, hash or secret.
// A comparison is flagged when either side names a MAC, hash, signature,
// token or other secret, unless the other side is a literal, nil or a
// length. allowed lists the reviewed exceptions with the reason each is
// safe.
func TestCR01ConstantTimeComparisons(t *testing.T) {
	t.Parallel()
	allowed := map[string]string{
		// The whole file's SHA-256 is public (every result carries it) and
		// the cursor holding it has already passed hmac.Equal.
		"server/tools/tools_documents.go:cur.FileSHA256": "public document hash, compared after the cursor's MAC check",
		// GitHub's blob SHA-1 of content GitHub itself sent: an integrity
		// check on public data, not a secret.
		"github/decode.go:sha": "public git blob SHA-1 of the response",
	}
	fset, files := productionFiles(t)
	for path, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			var a, b ast.Expr
			what := ""
			switch x := n.(type) {
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if !ok || len(x.Args) != 2 {
					return true
				}
				pkg, _ := sel.X.(*ast.Ident)
				if pkg == nil || !(pkg.Name == "bytes" && sel.Sel.Name == "Equal" || pkg.Name == "strings" && sel.Sel.Name == "EqualFold") {
					return true
				}
				a, b, what = x.Args[0], x.Args[1], pkg.Name+"."+sel.Sel.Name
			case *ast.BinaryExpr:
				if x.Op != token.EQL && x.Op != token.NEQ {
					return true
				}
				a, b, what = x.X, x.Y, x.Op.String()
			default:
				return true
			}
			if harmless(a) || harmless(b) || !(secretish(a) || secretish(b)) {
				return true
			}
			pos := fset.Position(n.Pos())
			// Exceptions are keyed by file and operand, which survive edits
			// around them better than line numbers.
			if _, ok := allowed[path+":"+exprString(a)]; ok {
				return true
			}
			if _, ok := allowed[path+":"+exprString(b)]; ok {
				return true
			}
			t.Errorf("%s:%d: %s compares %s with %s in variable time (use hmac.Equal or subtle.ConstantTimeCompare, or allow it here with a reason)",
				pos.Filename, pos.Line, what, exprString(a), exprString(b))
			return true
		})
	}
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.CallExpr:
		return exprString(x.Fun) + "(…)"
	case *ast.IndexExpr:
		return exprString(x.X) + "[…]"
	case *ast.SliceExpr:
		return exprString(x.X) + "[…:…]"
	case *ast.BasicLit:
		return x.Value
	}
	return "…"
}

// Rows CR-02 and PF-10 (lint): no math/rand anywhere in production code,
// and no InsecureSkipVerify.
func TestCR02AndPF10ForbiddenAPIs(t *testing.T) {
	t.Parallel()
	fset, files := productionFiles(t)
	for path, f := range files {
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "math/rand" || p == "math/rand/v2" {
				t.Errorf("%s imports %s: secrets and ids must come from crypto/rand", path, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == "InsecureSkipVerify" {
				t.Errorf("%s: InsecureSkipVerify: TLS must always be verified", fset.Position(id.Pos()))
			}
			return true
		})
	}
}
