package github

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
)

// pieces reads b at most n bytes at a time, as a TLS connection hands over
// records.
type pieces struct {
	b []byte
	n int
}

func (p *pieces) Read(out []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	k := copy(out[:min(len(out), p.n)], p.b)
	p.b = p.b[k:]
	return k, nil
}

// githubOrder encodes a contents answer with GitHub's member order: the
// metadata first, the content last (testdata/contents_file.json).
func githubOrder(tb testing.TB, obj map[string]any) []byte {
	tb.Helper()
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range []string{"type", "encoding", "size", "name", "path", "sha", "url", "_links", "content"} {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if i > 0 {
			b.WriteByte(',')
		}
		kv, _ := json.Marshal(k)
		vv, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(kv)
		b.WriteByte(':')
		b.Write(vv)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// checkStreamMatchesWhole decodes body whole and streamed in pieces of n
// bytes (thresholds lowered so that small bodies stream too), and fails
// unless both give the same outcome, content and SHA-256. One window of the
// three decodes into a lent buffer (WithFile's way): that buffer is the only
// difference lending makes.
func checkStreamMatchesWhole(t *testing.T, body []byte, path string, n int) {
	t.Helper()
	want, wantSum, wantErr := decodeContentsSum(bytes.Clone(body), path, true)
	for _, window := range []int{64, 1024, 8192} {
		lend := window == 1024
		got, gotSum, lent, err := decodeStreamLending(context.Background(), &pieces{b: bytes.Clone(body), n: max(n, 1)},
			int64(len(body)), path, true, 0, window, lend)
		switch {
		case sentinel(err) != sentinel(wantErr):
			t.Fatalf("pieces of %d, window %d: streamed %v, whole %v", n, window, err, wantErr)
		case err == nil && (!bytes.Equal(got.Content, want.Content) || got.BlobSHA != want.BlobSHA || gotSum != wantSum):
			t.Fatalf("pieces of %d, window %d: streamed content or hashes differ", n, window)
		case lent != nil && (!lend || err != nil || !lentHolds(lent, got.Content)):
			t.Fatalf("pieces of %d, window %d: a buffer lent (lend %v) for %v", n, window, lend, err)
		case lent != nil:
			returnBuffer(lent) // zeroed: TestWithFileLendsAndZeroes
		}
	}
}

func TestDecodeStreamMatchesWhole(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("Große Ära — 😀 text\n"), 300_000/24)
	bodies := map[string][]byte{
		"sorted members":  marshal(t, object("a", content)),
		"github order":    githubOrder(t, object("a", content)),
		"small":           githubOrder(t, object("a", []byte("hello"))),
		"empty":           githubOrder(t, object("a", nil)),
		"exactly a batch": githubOrder(t, object("a", bytes.Repeat([]byte("x"), batch/4*3))),
		"a batch and one": githubOrder(t, object("a", bytes.Repeat([]byte("x"), batch/4*3+1))),
	}
	for _, v := range vectors {
		bodies[v.file] = readVector(t, v.file)
	}
	big := bodies["github order"]
	start := bytes.Index(big, []byte(`"content":"`)) + len(`"content":"`)
	for _, off := range []int{0, 1, 61, 62, 63, batch, batch + 1, batch/60*62 - 1, batch / 60 * 62, 200_000} {
		at := start + off
		for name, ins := range map[string]string{"LF": "\n", "tab": `\t`, "u-escape": `\u0041`, "slash": `\/`,
			"padding": "====", "quote": `\"`, "backslash pair": `\\`, "0xff": "\xff", "newline escape": `\n`} {
			bodies["github order, "+name+" at "+strconv.Itoa(off)] = splice(big, at, 0, ins)
		}
		bodies["github order, drop at "+strconv.Itoa(off)] = splice(big, at, 1, "")
	}
	for _, lie := range []int{len(content) - 1, len(content) + 1, 0} {
		obj := object("a", content)
		obj["size"] = lie
		bodies["size "+strconv.Itoa(lie)] = githubOrder(t, obj)
	}
	obj := object("a", content)
	obj["content"] = strings.ReplaceAll(obj["content"].(string), "\n", "\r\n")
	bodies["CRLF lines"] = githubOrder(t, obj)
	obj = object("a", content)
	obj["content"] = base64.StdEncoding.EncodeToString(content) // one line
	bodies["one line"] = githubOrder(t, obj)

	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, n := range []int{1 << 20, 16 << 10, 4093, 100} {
				if n < 1000 && len(body) > 100_000 {
					continue
				}
				checkStreamMatchesWhole(t, body, "a", n)
			}
		})
	}
}

// TestDecodeStreamTakesTheStream shows the stream doing the work on
// GitHub's layout, and keeping only the members around the content.
func TestDecodeStreamTakesTheStream(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("0123456789abcdef"), MaxFileSize/16)
	body := githubOrder(t, object("docs/big.md", content))
	var st *contentStream
	var buf []byte
	for at := 0; at < len(body); at += 16384 {
		buf = append(buf, body[at:min(len(body), at+16384)]...)
		if st == nil && len(buf) >= prefixWindow {
			if st = startStream(buf, true, false); st == nil {
				t.Fatal("no stream on GitHub's layout")
			}
		}
		if st != nil {
			if buf = st.feed(buf); st.failed {
				t.Fatalf("stream abandoned at %d", at)
			}
			if len(buf) > prefixWindow+lineLen {
				t.Fatalf("%d bytes kept while streaming", len(buf))
			}
		}
	}
	if !st.done || !bytes.HasSuffix(buf, []byte(`"content":""}`)) {
		t.Fatalf("stream done %v, body ends %q", st.done, buf[max(0, len(buf)-20):])
	}
	f, sum, err := decodeContentsStreamed(buf, "docs/big.md", true, st)
	if err != nil || !bytes.Equal(f.Content, content) || sum != sha256.Sum256(content) {
		t.Fatalf("streamed decode: %v", err)
	}
}

// FuzzDecodeStreamMatchesWhole feeds arbitrary bodies, in arbitrary pieces,
// to the streaming reader with its thresholds at zero, and compares with
// the whole-body decoder.
func FuzzDecodeStreamMatchesWhole(f *testing.F) {
	for _, seed := range decodeSeeds {
		f.Add([]byte(seed), uint16(7))
	}
	f.Add(githubOrder(f, object("a", bytes.Repeat([]byte("héllo\n"), 500))), uint16(100))
	f.Add(marshal(f, object("a", bytes.Repeat([]byte("héllo\n"), 500))), uint16(33))
	f.Fuzz(func(t *testing.T, body []byte, n uint16) {
		checkStreamMatchesWhole(t, body, "a", int(n))
	})
}
