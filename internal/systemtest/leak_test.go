package systemtest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"heyaira/internal/app"
	"heyaira/store/storetest"
)

// schemaSQL is the root's schema.sql, what main embeds and hands to app.Run.
var schemaSQL string

// TestMain runs the tests from the module's root, so that they name its
// files (README.md, docs/, scripts/, schema.sql) and build its programs
// (`go build .`) as a user at the root would; and it adds the
// goroutine-leak check of docs/security-tests.md LD-05.
// Row LD-05 (docs/security-tests.md).
func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0) // this file, two folders below the root
	if err := os.Chdir(filepath.Join(filepath.Dir(file), "..", "..")); err != nil {
		panic(err)
	}
	b, err := os.ReadFile("schema.sql")
	if err != nil {
		panic(err)
	}
	schemaSQL = string(b)
	os.Exit(storetest.MainWithLeakCheck(m))
}

// run is the program as main runs it, with the root's schema.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return app.Run(ctx, args, getenv, stdin, stdout, stderr, schemaSQL)
}
