package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// prerequisiteChecks call storetest.Missing when what a real-client test
// needs is absent; the helpers below them call them.
var (
	prerequisiteChecks = map[string]bool{"jsDir": true, "chromiumPath": true}
	prerequisiteUsers  = map[string]bool{"jsDir": true, "chromiumPath": true, "runNode": true, "runNodeEnv": true}
)

// TestPrerequisitesCheckedBeforeSubtests: a test whose subtests
// need the Node packages or Chromium checks for them itself, before its
// first t.Run. Left to the subtests, a missing prerequisite skips every
// subtest and the test reports PASS (TestInteropTypeScriptSDKv2 did).
func TestPrerequisitesCheckedBeforeSubtests(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("internal/systemtest/*_test.go")
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || len(fn.Name.Name) < 5 || fn.Name.Name[:4] != "Test" {
				continue
			}
			firstRun, inSubtest, before := token.NoPos, false, false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" && len(call.Args) == 2 {
					if firstRun == token.NoPos {
						firstRun = call.Pos()
					}
					ast.Inspect(call.Args[1], func(m ast.Node) bool {
						if c, ok := m.(*ast.CallExpr); ok {
							if id, ok := c.Fun.(*ast.Ident); ok && prerequisiteUsers[id.Name] {
								inSubtest = true
							}
						}
						return true
					})
					return false
				}
				if id, ok := call.Fun.(*ast.Ident); ok && prerequisiteChecks[id.Name] && firstRun == token.NoPos {
					before = true
				}
				return true
			})
			if inSubtest {
				checked++
				if !before {
					t.Errorf("%s: %s's subtests need Node or Chromium but it does not call jsDir or chromiumPath before its first t.Run",
						fset.Position(fn.Pos()), fn.Name.Name)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("found no test whose subtests need Node or Chromium: is the check still looking at the right helpers?")
	}
}
