package lint

import (
	"go/ast"
	"strings"
	"testing"
)

// Row MP-01 (lint): no context value carries authority or a test seam. The
// principal and the source read with the bearer token reach a tool as
// arguments, and test hooks reach app.Serve as an argument; the only context
// values of production code are the request id and the access-log
// attributes (server/internal/web/middleware.go) and the client address, which only
// rate limits and logs read (server/internal/web/clientaddr.go). No exported field of a production type
// is a function, so none can be a hook a test sets.
func TestMP01NoContextValuesOrHookFields(t *testing.T) {
	t.Parallel()
	fset, files := productionFiles(t)
	for path, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if pkg, _ := sel.X.(*ast.Ident); pkg != nil && pkg.Name == "context" && sel.Sel.Name == "WithValue" &&
					path != "server/internal/web/middleware.go" && path != "server/internal/web/clientaddr.go" {
					t.Errorf("%s: context.WithValue outside the request id and log attributes", fset.Position(x.Pos()))
				}
			case *ast.TypeSpec:
				st, ok := x.Type.(*ast.StructType)
				if !ok || !x.Name.IsExported() {
					return true
				}
				for _, fld := range st.Fields.List {
					if _, isFunc := fld.Type.(*ast.FuncType); !isFunc {
						continue
					}
					for _, name := range fld.Names {
						if name.IsExported() && !allowedFuncField[x.Name.Name+"."+name.Name] {
							t.Errorf("%s: exported function field %s.%s", fset.Position(fld.Pos()), x.Name.Name, name.Name)
						}
					}
				}
			}
			return true
		})
	}
}

// allowedFuncField are the reviewed exported function fields, each with why
// it is not a hook a request could reach: they are set by the caller that
// constructs the value, as arguments are.
var allowedFuncField = map[string]bool{
	"Config.Now":           true, // github and server: the clock, passed in by main (nil: time.Now)
	"Config.OnRequest":     true, // github: metrics, set by serve
	"Config.OnMint":        true, // github: metrics, set by serve
	"CodeRedemption.Check": true, // store: the token endpoint's check inside the redemption transaction
	"Config.GitHubProblem": true, // server: what /readyz says about the App, passed in by serve (githubapp.go)
	// internal/app: the seams of app.Serve, set only by Go code; which code
	// may set them is TestMP01HooksOnlyInTestsAndTheDemo.
	"Hooks.GitHubNow": true, "Hooks.Tune": true, "Hooks.CIMDDial": true, "Hooks.Environ": true,
}

// TestMP01HooksOnlyInTestsAndTheDemo: the one production caller of app.Serve
// (app.Run) sets no hook but the environment listing, so the production
// binary cannot be pointed at another GitHub or CIMD host. Only _test.go
// files and the demo program (internal/demo) set the others; the binary does
// not link the demo (TestDependencies).
// Row BT-44 (docs/security-tests.md).
func TestMP01HooksOnlyInTestsAndTheDemo(t *testing.T) {
	t.Parallel()
	fset, files := productionFiles(t)
	literals := 0
	for path, f := range files {
		if strings.HasPrefix(path, "internal/demo/") {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isHooksType(lit.Type) {
				return true
			}
			literals++
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if key, _ := kv.Key.(*ast.Ident); !ok || key == nil || key.Name != "Environ" {
					t.Errorf("%s: a production file sets a hook of app.Serve", fset.Position(e.Pos()))
				}
			}
			return true
		})
	}
	if literals == 0 {
		t.Error("found no Hooks literal: app.Run's call of Serve moved, update this test")
	}
}

func isHooksType(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "Hooks"
	case *ast.SelectorExpr:
		return x.Sel.Name == "Hooks"
	}
	return false
}
