package authserver_test

import (
	"os"
	"testing"

	"heyaira/store/storetest"
)

// The authorization server's whole-server tests (oauth_*_test.go,
// signin*_test.go, cimd_*_test.go) run through servertest on PostgreSQL.
func TestMain(m *testing.M) { os.Exit(storetest.MainWithLeakCheck(m)) }
