package skips

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// The summary counts the skips per reason, names the tests, and is empty
// when nothing skipped; Report writes it to the writer and to the terminal.
func TestSummary(t *testing.T) {
	if s := Summary("x"); s != "" {
		t.Fatalf("summary with no skips: %q", s)
	}
	Record("TestB", "skipped: node_modules is missing")
	Record("TestA/sub", "skipped: node_modules is missing")
	Record("TestC", "skipped: chromium is missing")
	want := "SKIPPED: 3 test(s) of heyaira did not run, for a missing prerequisite (scripts/test installs them and runs everything):\n" +
		"  2 × skipped: node_modules is missing\n      (TestA/sub, TestB)\n" +
		"  1 × skipped: chromium is missing\n      (TestC)\n"
	if got := Summary("heyaira"); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	var term bytes.Buffer
	tty = func() (io.WriteCloser, error) { return nopCloser{&term}, nil }
	var out bytes.Buffer
	Report(&out)
	if !strings.HasPrefix(out.String(), "SKIPPED: 3 test(s)") || term.String() != out.String() {
		t.Errorf("Report wrote %q to w and %q to the terminal", out.String(), term.String())
	}
	tty = func() (io.WriteCloser, error) { return nil, errors.New("no terminal") }
	out.Reset()
	Report(&out)
	if !strings.HasPrefix(out.String(), "SKIPPED: 3 test(s)") {
		t.Errorf("Report without a terminal wrote %q", out.String())
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
