package server_test

import (
	"os"
	"testing"

	"heyaira/store/storetest"
)

// TestMain adds the goroutine-leak check of docs/security-tests.md LD-05.
// Row LD-05 (docs/security-tests.md).
func TestMain(m *testing.M) { os.Exit(storetest.MainWithLeakCheck(m)) }
