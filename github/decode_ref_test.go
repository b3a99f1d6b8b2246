package github

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// A plain contents decoder, kept as the oracle for
// FuzzDecodeContentsMatchesReference: encoding/json for the object, then
// unquote the whole content string, strip line breaks, decode into a fresh
// buffer, verify. decodeContents does the same in place, in one walk over
// the members; this one is written to be obviously right, not fast.

type refContentsObject struct {
	Type     string
	Encoding *string
	Size     *int64
	Path     *string
	SHA      string
	Content  json.RawMessage // nil when absent
}

// refParse reads the members the decoder uses by their exact names, as
// decodeContents does: encoding/json's struct decoding would also take "Content" or
// "TYPE" for them. Other members are only checked for syntax.
func refParse(body []byte) (refContentsObject, error) {
	var obj refContentsObject
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return obj, err
	}
	for name, dst := range map[string]any{"type": &obj.Type, "encoding": &obj.Encoding,
		"size": &obj.Size, "path": &obj.Path, "sha": &obj.SHA} {
		if raw, ok := members[name]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return obj, err
			}
		}
	}
	obj.Content = members["content"]
	return obj, nil
}

func referenceDecodeContents(body []byte, wantPath string) (*File, error) {
	obj, err := refParse(body)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed contents JSON", ErrUnavailable)
	}
	switch obj.Type {
	case "file":
	case "":
		return nil, fmt.Errorf("%w: contents response without a type", ErrUnavailable)
	case "dir", "symlink", "submodule":
		return nil, fmt.Errorf("%w: object is a %s", ErrNotFile, obj.Type)
	default:
		return nil, fmt.Errorf("%w: object of unknown type", ErrNotFile)
	}
	if obj.Path == nil || *obj.Path != wantPath {
		return nil, fmt.Errorf("%w: response path differs from the request", ErrInconsistent)
	}
	if obj.Size == nil || *obj.Size < 0 {
		return nil, fmt.Errorf("%w: missing or negative size", ErrInconsistent)
	}
	size := *obj.Size
	if size > MaxFileSize {
		return nil, fmt.Errorf("%w: too large", ErrTooLarge)
	}
	if obj.Encoding != nil && *obj.Encoding == "none" {
		return nil, fmt.Errorf("%w: content not inlined", ErrTooLarge)
	}
	raw := obj.Content
	var content []byte
	switch {
	case raw == nil || string(raw) == "null":
		if size != 0 {
			return nil, fmt.Errorf("%w: no content", ErrInconsistent)
		}
		content = []byte{}
	case obj.Encoding == nil || *obj.Encoding != "base64":
		return nil, fmt.Errorf("%w: unsupported content encoding", ErrUnavailable)
	case raw[0] != '"':
		return nil, fmt.Errorf("%w: content is not a string", ErrUnavailable)
	default:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: content is not a string", ErrUnavailable)
		}
		b64 := strings.NewReplacer("\n", "", "\r", "").Replace(s)
		if len(b64) != base64.StdEncoding.EncodedLen(int(size)) {
			return nil, fmt.Errorf("%w: length", ErrInconsistent)
		}
		out := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
		n, err := base64.StdEncoding.Strict().Decode(out, []byte(b64))
		if err != nil || n != int(size) {
			return nil, fmt.Errorf("%w: not base64", ErrInconsistent)
		}
		content = out[:n]
	}
	if !isSHA1Hex(obj.SHA) || blobSHA(content) != obj.SHA {
		return nil, fmt.Errorf("%w: blob SHA-1", ErrInconsistent)
	}
	if !utf8.Valid(content) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrNotUTF8)
	}
	if bytes.IndexByte(content, 0) >= 0 {
		return nil, fmt.Errorf("%w: NUL byte", ErrNotUTF8)
	}
	return &File{Path: *obj.Path, BlobSHA: obj.SHA, Size: len(content), Content: content}, nil
}

// plainJSON reports whether body is a case the two decoders must agree on:
// valid UTF-8, and a top-level object (if it is one) whose member names are
// unique. On the rest decodeContents is deliberately stricter (see
// parseContentsObject in decode.go).
func plainJSON(body []byte) bool {
	if !utf8.Valid(body) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return true
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		name := tok.(string)
		if seen[name] {
			return false
		}
		seen[name] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return true
		}
	}
	return true
}

// sentinel names the one sentinel err wraps.
func sentinel(err error) error {
	for _, s := range []error{ErrUnavailable, ErrNotFile, ErrInconsistent, ErrTooLarge, ErrNotUTF8} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// FuzzDecodeContentsMatchesReference checks decodeContents against the
// plain decoder above: it never accepts what the reference refuses, returns
// the same file when both accept, and on plain JSON (see plainJSON) gives
// the same outcome, sentinel for sentinel.
// Row AS-02 (docs/security-tests.md).
func FuzzDecodeContentsMatchesReference(f *testing.F) {
	for _, v := range vectors {
		f.Add(readVector(f, v.file), v.path)
	}
	for _, seed := range decodeSeeds {
		f.Add([]byte(seed), "a")
	}
	f.Fuzz(func(t *testing.T, body []byte, wantPath string) {
		got, err := decodeContents(bytes.Clone(body), wantPath)
		want, wantErr := referenceDecodeContents(bytes.Clone(body), wantPath)
		switch {
		case err == nil && wantErr != nil:
			t.Fatalf("accepted what the reference refuses (%v)", wantErr)
		case err == nil && (got.Path != want.Path || got.BlobSHA != want.BlobSHA || !bytes.Equal(got.Content, want.Content)):
			t.Fatalf("file differs from the reference's")
		case plainJSON(body) && sentinel(err) != sentinel(wantErr):
			t.Fatalf("outcome %v, reference %v", err, wantErr)
		}
	})
}

// decodeSeeds are hand-made corner cases for both fuzz targets.
var decodeSeeds = []string{
	`{"type":"file","path":"a","size":1,"encoding":"base64","sha":"2e65efe2a145dda7ee51d1741299f848e5bf752e","content":"YQ==\n"}`,
	`{"type":"file","path":"a","size":1,"encoding":"base64","sha":"2e65efe2a145dda7ee51d1741299f848e5bf752e","content":"YQ==\\n"}`,
	`{"type":"file","path":"a","size":1,"encoding":"base64","sha":"2e65efe2a145dda7ee51d1741299f848e5bf752e","content":"Y\u0051==\\u000a"}`,
	`{"type":"file","path":"a","size":1,"encoding":"base64","sha":"2e65efe2a145dda7ee51d1741299f848e5bf752e","content":"YQ==` + "\n" + `"}`,
	`{"type":"file","path":"a","size":1,"encoding":"base64","sha":"2e65efe2a145dda7ee51d1741299f848e5bf752e","content":"YQ\\t=="}`,
	`{"type":"file","path":"a","size":1,"encoding":"base64","sha":"2e65efe2a145dda7ee51d1741299f848e5bf752e","content":"\\/QQ=","x":[1,{"y":[true,false,null,-0.5e+3]}]}`,
	`{"type":"dir","path":"a","content":"` + "\x01" + `"}`,
	`{"type":"file","path":"a","path":"b"}`,
	`{"TYPE":"file","type":"dir"}`,
	`{"type":"file","path":"\ud800","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`,
	`{"type":"file","path":"a","size":1e0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`,
	`{"type":"file","path":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391","content":null} `,
	`{"type":"file","path":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391","content":{}}`,
}

// TestDecodeContentsLargeMatchesReference alters a 200 KB answer around the
// 64 KiB chunk boundaries of the decoder, where the fuzzer rarely reaches,
// and compares every outcome with the reference decoder's.
// Row AS-02 (docs/security-tests.md).
func TestDecodeContentsLargeMatchesReference(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("Große Ära — 😀 text\n"), 200_000/24)
	body := marshal(t, object("a", content))
	start := bytes.Index(body, []byte(`"content":"`)) + len(`"content":"`)
	edits := map[string]func(b []byte, at int) []byte{
		"raw LF":        func(b []byte, at int) []byte { return splice(b, at, 0, "\n") },
		"raw CR LF x4":  func(b []byte, at int) []byte { return splice(b, at, 0, "\r\n\r\n") },
		"raw tab":       func(b []byte, at int) []byte { return splice(b, at, 0, "\t") },
		"raw é":         func(b []byte, at int) []byte { return splice(b, at, 0, "é") },
		"raw 0xff":      func(b []byte, at int) []byte { return splice(b, at, 0, "\xff") },
		"escaped tab":   func(b []byte, at int) []byte { return splice(b, at, 0, `\t`) },
		"escaped LF":    func(b []byte, at int) []byte { return splice(b, at, 0, `\u000a`) },
		"escaped slash": func(b []byte, at int) []byte { return splice(b, at, 0, `\/`) },
		"u-escape":      func(b []byte, at int) []byte { return splice(b, at, 1, `\u00`+fmt.Sprintf("%02x", b[at])) },
		"bad escape":    func(b []byte, at int) []byte { return splice(b, at, 0, `\x`) },
		"drop a byte":   func(b []byte, at int) []byte { return splice(b, at, 1, "") },
		"padding":       func(b []byte, at int) []byte { return splice(b, at, 0, "====") },
		"quote":         func(b []byte, at int) []byte { return splice(b, at, 0, `\"`) },
	}
	for name, edit := range edits {
		for _, off := range []int{0, 1, 65535, 65536, 65537, 65536 * 2, 131073, 150_000} {
			at := start + off + off/60*2 // the n-th base64 character, skipping \n escapes
			if body[at] == '\\' || body[at-1] == '\\' {
				at++
			}
			b := edit(bytes.Clone(body), at)
			got, err := decodeContents(bytes.Clone(b), "a")
			want, wantErr := referenceDecodeContents(bytes.Clone(b), "a")
			if sentinel(err) != sentinel(wantErr) && !(name == "raw 0xff" && errors.Is(err, ErrUnavailable)) {
				t.Errorf("%s at %d: %v, reference %v", name, off, err, wantErr)
			}
			if err == nil && (wantErr != nil || !bytes.Equal(got.Content, want.Content)) {
				t.Errorf("%s at %d: content differs", name, off)
			}
		}
	}
	got, err := decodeContents(bytes.Clone(body), "a")
	if err != nil || !bytes.Equal(got.Content, content) {
		t.Fatalf("unaltered answer: %v", err)
	}
}

func splice(b []byte, at, del int, ins string) []byte {
	return append(append(append([]byte{}, b[:at]...), ins...), b[at+del:]...)
}
