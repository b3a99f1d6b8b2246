// Package lint holds the module's own rules: which packages import which,
// what the production binary links, that test seams stay arguments, that
// skips are reported, and that the README and docs/ agree with the code.
// Its tests run from the module's root and read the tree as files.
package lint

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"heyaira/internal/leaktest"
)

// TestMain runs the tests from the module's root, so that paths read as a
// reader of the repository would write them, and adds the goroutine-leak
// check of docs/security-tests.md LD-05.
// Row LD-05 (docs/security-tests.md).
func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0) // this file, two folders below the root
	if err := os.Chdir(filepath.Join(filepath.Dir(file), "..", "..")); err != nil {
		panic(err)
	}
	os.Exit(leaktest.Main(m))
}
