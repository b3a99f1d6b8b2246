package server

import (
	"os"
	"testing"

	"heyaira/store/storetest"
)

// TestMain adds the goroutine-leak check of security.md LD-05.
func TestMain(m *testing.M) { os.Exit(storetest.MainWithLeakCheck(m)) }
