package secretfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyFileOfAnotherUser: a key file this user cannot use says whose it
// must be and what to do (run as the user serve runs as), whether the open
// is refused (another user's file) or the file's owner is wrong (as root).
func TestKeyFileOfAnotherUser(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cursor.key")
	if err := os.WriteFile(path, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Chmod(path, 0); err != nil { // the owner itself cannot open it: as another user's file
		t.Fatal(err)
	}
	_, err := Read(path)
	if err == nil || !strings.Contains(err.Error(), "belongs to the user heyaira serve runs as") ||
		!strings.Contains(err.Error(), "sudo -u heyaira") {
		t.Errorf("Read = %v", err)
	}
}
