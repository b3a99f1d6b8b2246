package github

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vectors are the canned GitHub answers in testdata, with the path asked for
// and the outcome expected.
var vectors = []struct {
	file, path string
	want       error
}{
	{"contents_file.json", "docs/CONTINUITY_PROTOCOL.md", nil},
	{"contents_empty.json", "docs/empty.md", nil},
	{"contents_dir.json", "docs", ErrNotFile},
	{"contents_symlink.json", "docs/link.md", ErrNotFile},
	{"contents_submodule.json", "vendor/lib", ErrNotFile},
	{"contents_too_large.json", "docs/big.md", ErrTooLarge},
}

func readVector(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Rows AS-02, PF-11 (docs/security-tests.md).
func TestDecodeContentsVectors(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		t.Run(v.file, func(t *testing.T) {
			t.Parallel()
			f, err := decodeContents(readVector(t, v.file), v.path)
			if !errors.Is(err, v.want) || (v.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, v.want)
			}
			if err == nil && (f.Path != v.path || f.Size != len(f.Content) || blobSHA(f.Content) != f.BlobSHA) {
				t.Errorf("file %+v does not verify", f)
			}
		})
	}
}

// object builds a contents answer for content at path, as GitHub encodes it.
func object(path string, content []byte) map[string]any {
	obj := map[string]any{
		"type": "file", "encoding": "base64", "size": len(content), "name": "x", "path": path,
		"sha": blobSHA(content), "content": nil,
	}
	if len(content) > 0 {
		enc := base64.StdEncoding.EncodeToString(content)
		var sb strings.Builder
		for len(enc) > 60 {
			sb.WriteString(enc[:60] + "\n")
			enc = enc[60:]
		}
		sb.WriteString(enc + "\n")
		obj["content"] = sb.String()
	}
	return obj
}

func marshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Rows AS-02, IN-04, IN-05 (docs/security-tests.md).
func TestDecodeContents(t *testing.T) {
	t.Parallel()
	const p = "docs/a.md"
	text := []byte("hello, world\n")
	with := func(change func(map[string]any)) []byte {
		obj := object(p, text)
		change(obj)
		return marshal(t, obj)
	}
	oneMiB := bytes.Repeat([]byte("0123456789abcdef"), MaxFileSize/16)
	longPath := strings.Repeat("d/", 499) + "f.md" // 1,002 bytes
	tests := []struct {
		name    string
		body    []byte
		path    string
		want    error
		content []byte
	}{
		{"plain", with(func(map[string]any) {}), p, nil, text},
		{"exactly 1 MiB with a long path", marshal(t, object(longPath, oneMiB)), longPath, nil, oneMiB},
		{"empty, null content", marshal(t, object(p, nil)), p, nil, []byte{}},
		{"empty, content absent", with(func(o map[string]any) {
			delete(o, "content")
			o["size"], o["sha"] = 0, blobSHA(nil)
		}), p, nil, []byte{}},
		{"UTF-8 BOM kept", marshal(t, object(p, []byte("\xef\xbb\xbfhi"))), p, nil, []byte("\xef\xbb\xbfhi")},
		{"escaped slash", []byte(strings.ReplaceAll(string(marshal(t, object(p, []byte("???")))), "/", `\/`)), p, nil, []byte("???")},
		{"unicode escape", []byte(strings.Replace(string(with(func(map[string]any) {})), `"aGVs`, `"\u0061GVs`, 1)), p, nil, text},

		{"size over 1 MiB, checked before decoding", with(func(o map[string]any) {
			o["size"], o["content"] = MaxFileSize+1, "!!not base64!!"
		}), p, ErrTooLarge, nil},
		{"encoding none", with(func(o map[string]any) { o["encoding"], o["content"] = "none", "" }), p, ErrTooLarge, nil},
		{"encoding utf-8", with(func(o map[string]any) { o["encoding"] = "utf-8" }), p, ErrUnavailable, nil},
		{"encoding absent", with(func(o map[string]any) { delete(o, "encoding") }), p, ErrUnavailable, nil},

		{"dir", with(func(o map[string]any) { o["type"] = "dir" }), p, ErrNotFile, nil},
		{"symlink", with(func(o map[string]any) { o["type"] = "symlink" }), p, ErrNotFile, nil},
		{"submodule", with(func(o map[string]any) { o["type"] = "submodule" }), p, ErrNotFile, nil},
		{"unknown type", with(func(o map[string]any) { o["type"] = "commit" }), p, ErrNotFile, nil},

		{"blob sha mismatch", with(func(o map[string]any) { o["sha"] = blobSHA([]byte("other")) }), p, ErrInconsistent, nil},
		{"blob sha uppercase", with(func(o map[string]any) { o["sha"] = strings.ToUpper(blobSHA(text)) }), p, ErrInconsistent, nil},
		{"path mismatch", with(func(o map[string]any) { o["path"] = "docs/target.md" }), p, ErrInconsistent, nil},
		{"path absent", with(func(o map[string]any) { delete(o, "path") }), p, ErrInconsistent, nil},
		{"size smaller than content", with(func(o map[string]any) { o["size"] = 10 }), p, ErrInconsistent, nil},
		{"size larger than content", with(func(o map[string]any) { o["size"] = 100 }), p, ErrInconsistent, nil},
		{"size absent", with(func(o map[string]any) { delete(o, "size") }), p, ErrInconsistent, nil},
		{"size negative", with(func(o map[string]any) { o["size"] = -1 }), p, ErrInconsistent, nil},
		{"null content, non-zero size", with(func(o map[string]any) { o["content"] = nil }), p, ErrInconsistent, nil},
		{"content not base64", with(func(o map[string]any) { o["content"] = "@@@@@@@@@@@@@@@@@@@@" }), p, ErrInconsistent, nil},
		{"content with non-zero padding bits", with(func(o map[string]any) { o["content"], o["size"], o["sha"] = "YR==", 1, blobSHA([]byte("a")) }), p, ErrInconsistent, nil},
		{"content with a tab", with(func(o map[string]any) { o["content"] = "aGVsbG8s\tIHdvcmxkCg==" }), p, ErrInconsistent, nil},

		{"invalid UTF-8 ff fe", marshal(t, object(p, []byte("\xff\xfe\x00A"))), p, ErrNotUTF8, nil},
		{"surrogate", marshal(t, object(p, []byte("a\xed\xa0\x80"))), p, ErrNotUTF8, nil},
		{"overlong", marshal(t, object(p, []byte("\xc0\xaf"))), p, ErrNotUTF8, nil},
		{"above U+10FFFF", marshal(t, object(p, []byte("\xf4\x90\x80\x80"))), p, ErrNotUTF8, nil},
		{"truncated rune", marshal(t, object(p, []byte("ok \xf0\x9f\x98"))), p, ErrNotUTF8, nil},
		{"NUL byte", marshal(t, object(p, []byte("abc\x00def"))), p, ErrNotUTF8, nil},

		{"malformed JSON", []byte(`{"type":"file",`), p, ErrUnavailable, nil},
		{"HTML", []byte("<html><body>Unicorn!</body></html>"), p, ErrUnavailable, nil},
		{"null", []byte("null"), p, ErrUnavailable, nil},
		{"array", []byte(`[{"type":"file"}]`), p, ErrUnavailable, nil},
		{"trailing data", append(with(func(map[string]any) {}), []byte(` {}`)...), p, ErrUnavailable, nil},
		{"size is a string", []byte(`{"type":"file","size":"abc","path":"docs/a.md"}`), p, ErrUnavailable, nil},
		{"type absent", with(func(o map[string]any) { delete(o, "type") }), p, ErrUnavailable, nil},
		{"content is a number", with(func(o map[string]any) { o["content"] = 5 }), p, ErrUnavailable, nil},
		{"deep nesting", []byte(strings.Repeat("[", 100000)), p, ErrUnavailable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := decodeContents(tt.body, tt.path)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				if diff := cmp.Diff(tt.content, f.Content); diff != "" {
					t.Errorf("content mismatch (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if f != nil {
				t.Errorf("file = %+v on error", f)
			}
			if _, n := CodeOf(err); n != 1 {
				t.Errorf("error %v matches %d sentinels, want 1", err, n)
			}
		})
	}
}

// TestOneMiBFitsTheBound pins the bound's arithmetic: a 1 MiB file with a
// 1,000-byte path, encoded as GitHub does, fits in MaxContentsResponse.
// Row IN-06 (docs/security-tests.md).
func TestOneMiBFitsTheBound(t *testing.T) {
	t.Parallel()
	obj := object(strings.Repeat("d/", 499)+"f.md", bytes.Repeat([]byte{'x'}, MaxFileSize))
	obj["url"] = strings.Repeat("u", 1200)
	obj["git_url"], obj["html_url"], obj["download_url"] = obj["url"], obj["url"], obj["url"]
	if n := len(marshal(t, obj)); n > MaxContentsResponse {
		t.Errorf("encoded 1 MiB answer is %d bytes, over %d", n, MaxContentsResponse)
	}
}

func TestDecodeRef(t *testing.T) {
	t.Parallel()
	const sha = "aa218f56b14c9653891f9e74264a383fa43fefbd"
	ref := func(name, typ, sha string) []byte {
		return []byte(`{"ref":"` + name + `","object":{"type":"` + typ + `","sha":"` + sha + `"}}`)
	}
	tests := []struct {
		name string
		body []byte
		want error
	}{
		{"ok", ref("refs/heads/feat/x", "commit", sha), nil},
		{"other branch", ref("refs/heads/feat/xy", "commit", sha), ErrInconsistent},
		{"a tag", ref("refs/tags/feat/x", "commit", sha), ErrInconsistent},
		{"annotated tag object", ref("refs/heads/feat/x", "tag", sha), ErrInconsistent},
		{"short sha", ref("refs/heads/feat/x", "commit", sha[:39]), ErrInconsistent},
		{"uppercase sha", ref("refs/heads/feat/x", "commit", strings.ToUpper(sha)), ErrInconsistent},
		{"prefix-match array", []byte(`[` + string(ref("refs/heads/feat/x", "commit", sha)) + `]`), ErrUnavailable},
		{"malformed", []byte(`{"ref":`), ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeRef(tt.body, "feat/x")
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err == nil && got != sha {
				t.Errorf("sha = %q, want %q", got, sha)
			}
		})
	}
}

// Where the decoder is stricter than json.Unmarshal into a struct, and the
// details encoding/json settles for it (decode.go): exact member names, no
// repeated member the decoder reads, a body of valid UTF-8, integers for
// size, nesting bounded by encoding/json (10,000 levels). Each
// is refused as malformed, or, for a name that only differs in case,
// ignored.
// Row AS-02 (docs/security-tests.md).
func TestDecodeContentsStricterThanEncodingJSON(t *testing.T) {
	t.Parallel()
	const ok = `"type":"file","path":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"`
	const depth = 10000 - 1 // encoding/json's bound on nesting, less the top-level object
	tests := []struct {
		name, body string
		want       error
	}{
		{"accepted as is", `{` + ok + `}`, nil},
		{"escaped member name", `{"t\u0079pe":"file","path":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, nil},
		{"repeated path", `{` + ok + `,"path":"a"}`, ErrUnavailable},
		{"repeated type", `{` + ok + `,"type":"file"}`, ErrUnavailable},
		{"repeated sha", `{` + ok + `,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, ErrUnavailable},
		{"repeated size", `{` + ok + `,"size":0}`, ErrUnavailable},
		{"repeated encoding", `{` + ok + `,"encoding":"base64","encoding":"base64"}`, ErrUnavailable},
		{"repeated content", `{` + ok + `,"content":null,"content":null}`, ErrUnavailable},
		{"repeated null path", `{"type":"file","path":null,"path":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, ErrUnavailable},
		{"repeated unknown member", `{` + ok + `,"x":1,"x":2}`, nil},
		{"PATH is not path", `{"type":"file","PATH":"a","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, ErrInconsistent},
		{"Type is not type", `{"Type":"file"}`, ErrUnavailable},
		{"Content is not content", `{` + ok + `,"Content":5}`, nil},
		{"invalid UTF-8 in a skipped string", `{` + ok + `,"name":"` + "\xff" + `"}`, ErrUnavailable},
		{"invalid UTF-8 in path", `{"type":"file","path":"` + "\xc0\xaf" + `","size":0}`, ErrUnavailable},
		{"lone surrogate becomes U+FFFD", `{"type":"file","path":"\udc00","size":0,"sha":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}`, ErrInconsistent},
		{"type is a number", `{"type":1}`, ErrUnavailable},
		{"path is an object", `{"type":"file","path":{}}`, ErrUnavailable},
		{"sha is an array", `{` + ok + `,"x":0,"sha":[]}`, ErrUnavailable},
		{"size with a fraction", `{"type":"file","path":"a","size":0.0}`, ErrUnavailable},
		{"size with an exponent", `{"type":"file","path":"a","size":0e1}`, ErrUnavailable},
		{"size overflows", `{"type":"file","path":"a","size":9223372036854775808}`, ErrUnavailable},
		{"size is true", `{"type":"file","path":"a","size":true}`, ErrUnavailable},
		{"leading zero", `{` + ok + `,"x":01}`, ErrUnavailable},
		{"nesting at the limit", `{` + ok + `,"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`, nil},
		{"nesting over the limit", `{` + ok + `,"x":` + strings.Repeat("[", depth+1) + strings.Repeat("]", depth+1) + `}`, ErrUnavailable},
		{"raw control character in content of a dir", `{"type":"dir","content":"` + "\x01" + `"}`, ErrUnavailable},
		{"raw line break in content", `{` + ok + `,"content":"` + "\n" + `"}`, ErrUnavailable},
		{"bad escape in content of a dir", `{"type":"dir","content":"\x"}`, ErrUnavailable},
		{"trailing comma", `{` + ok + `,}`, ErrUnavailable},
		{"missing colon", `{"type" "file"}`, ErrUnavailable},
		{"trailing garbage", `{` + ok + `}x`, ErrUnavailable},
		{"trailing white space", `{` + ok + "} \r\n\t", nil},
		{"two objects", `{` + ok + `}{}`, ErrUnavailable},
		{"unterminated object", `{` + ok, ErrUnavailable},
		{"empty object", `{}`, ErrUnavailable},
		{"empty body", ``, ErrUnavailable},
		{"unterminated content", `{` + ok + `,"content":"YQ==\"}`, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeContents([]byte(tt.body), "a")
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// inBody is what lets the decoder keep json.Unmarshal's view of a value
// instead of a copy: it must accept exactly the slices of the body's own
// memory, wherever they start, and nothing else.
// Row AS-02 (docs/security-tests.md).
func TestInBody(t *testing.T) {
	t.Parallel()
	body := []byte(`{"content":"YQ=="}`)
	other := bytes.Clone(body)
	for _, tt := range []struct {
		name    string
		v       []byte
		off     int
		inThere bool
	}{
		{"a slice of the body", body[11:17], 11, true},
		{"the whole body", body, 0, true},
		{"its last byte", body[len(body)-1:], len(body) - 1, true},
		{"a copy", bytes.Clone(body[11:17]), 0, false},
		{"the same place in another buffer", other[11:17], 0, false},
		{"capacity cut", body[11:17:17], 0, false},
		{"empty", body[3:3], 0, false},
		{"nil", nil, 0, false},
	} {
		off, ok := inBody(body, tt.v)
		if ok != tt.inThere || (ok && off != tt.off) {
			t.Errorf("%s: inBody = %d, %v; want %d, %v", tt.name, off, ok, tt.off, tt.inThere)
		}
	}
}
