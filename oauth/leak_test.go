package oauth

import (
	"os"
	"testing"

	"heyaira/internal/leaktest"
)

// TestMain adds the goroutine-leak check of docs/security-tests.md LD-05.
// Row LD-05 (docs/security-tests.md).
func TestMain(m *testing.M) { os.Exit(leaktest.Main(m)) }
