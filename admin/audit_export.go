package admin

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"heyaira/store"
)

// This file is where prune-audit puts the rows before they are deleted: a
// new file, or stdout. The store deletes rows only after Flush returns nil,
// and for a file Flush means the rows are on disk: the file and its
// directory are synced.

// auditExport writes audit rows as JSON lines. It implements store.AuditSink.
type auditExport struct {
	path string   // as given; "-" for stdout
	file *os.File // nil for stdout
	buf  *bufio.Writer
	enc  *json.Encoder
	rows int64
}

// createAuditExport opens the export: path "-" is stdout; any other path
// must not exist yet, so an export never overwrites an earlier one.
func createAuditExport(path string, stdout io.Writer) (*auditExport, error) {
	x := &auditExport{path: path}
	if path == "-" {
		x.buf = bufio.NewWriter(stdout)
	} else {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("export file %s already exists: give a new file", printable(path))
		}
		if err != nil {
			return nil, fmt.Errorf("cannot create export file: %v", err)
		}
		x.file, x.buf = f, bufio.NewWriter(f)
	}
	x.enc = json.NewEncoder(x.buf)
	x.enc.SetEscapeHTML(false)
	return x, nil
}

// Export writes one row as one line of JSON, the shape of audit --json's events.
func (x *auditExport) Export(e store.AuditEvent) error {
	if err := x.enc.Encode(e); err != nil {
		return x.fail(err)
	}
	x.rows++
	return nil
}

// Flush writes out what is buffered and, for a file, syncs it and its directory.
func (x *auditExport) Flush() error {
	if err := x.buf.Flush(); err != nil {
		return x.fail(err)
	}
	if x.file == nil {
		return nil
	}
	if err := x.file.Sync(); err != nil {
		return x.fail(err)
	}
	dir, err := os.Open(filepath.Dir(x.path))
	if err != nil {
		return x.fail(err)
	}
	defer dir.Close()
	if err := dir.Sync(); err != nil {
		return x.fail(err)
	}
	return nil
}

func (x *auditExport) fail(err error) error {
	if x.file == nil {
		return fmt.Errorf("write to stdout: %v", err)
	}
	return fmt.Errorf("write %s: %v", printable(x.path), err)
}

// close closes the file. After a failed prune, a file that holds no row is
// removed (nothing was deleted, so it holds nothing of value); one that
// holds rows is kept, since the database may have deleted them if the
// commit failed on the way back. It returns what to add to the error.
func (x *auditExport) close(pruneFailed bool) string {
	if x.file == nil {
		return ""
	}
	x.file.Close()
	switch {
	case !pruneFailed:
		return ""
	case x.rows == 0:
		os.Remove(x.path)
		return ""
	}
	return fmt.Sprintf("; export file %s is kept: it holds %d row(s), which may still be in the database too",
		printable(x.path), x.rows)
}
