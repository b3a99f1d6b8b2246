package tools_test

import (
	"os"
	"testing"

	"heyaira/store/storetest"
)

// The tools' whole-server tests (memory_test.go, documents_test.go) run
// through servertest on PostgreSQL.
func TestMain(m *testing.M) { os.Exit(storetest.MainWithLeakCheck(m)) }
