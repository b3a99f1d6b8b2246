package tools_test

import (
	"os"
	"testing"

	"heyaira/store/storetest"
)

// The tools' whole-server tests run through servertest on PostgreSQL.
func TestMain(m *testing.M) { os.Exit(storetest.MainWithLeakCheck(m)) }
