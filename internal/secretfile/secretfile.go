// Package secretfile reads secrets (the cursor key, the GitHub App key) from
// files that only the running user can read. Both commands use it: serve for
// both keys, the admin CLI for the App key when it checks a document source.
package secretfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// runAsOwner is what to do when the file belongs to someone else.
const runAsOwner = "a key file belongs to the user heyaira serve runs as; run this command as that user " +
	"(e.g. sudo -u heyaira), or give the file to the running user (chown, chmod 600)"

// maxSecretFile bounds what Read reads: key files are tiny.
const maxSecretFile = 64 << 10

// Read reads a secret from a "protected file": a regular file,
// owned by the running user, not readable or writable by group or others.
// Because a secret in a file others can read is no longer a secret, anything
// else is refused before a byte is read.
func Read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("open %s: %w: %s", path, errors.Unwrap(err), runAsOwner)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s has mode %04o; it must not be accessible by group or others (chmod 600)", path, perm)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%s is owned by uid %d, not by the running user (uid %d): %s", path, st.Uid, os.Getuid(), runAsOwner)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSecretFile)
	}
	return b, nil
}
