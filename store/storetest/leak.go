package storetest

import (
	"testing"

	"heyaira/internal/leaktest"
)

// MainWithLeakCheck runs a package's tests, stops the private PostgreSQL
// cluster they may have started (cluster.go), and then runs the
// goroutine-leak check of docs/security-tests.md LD-05 (internal/leaktest).
// It is for packages whose tests use PostgreSQL; a package whose tests do not
// calls leaktest.Main and does not link the store. Use it as:
//
//	func TestMain(m *testing.M) { os.Exit(storetest.MainWithLeakCheck(m)) }
func MainWithLeakCheck(m *testing.M) int { return leaktest.Main(m, stopCluster) }
