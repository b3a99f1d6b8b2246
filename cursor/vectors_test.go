package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The vectors in testdata/vectors.txt are in age's testkit shape: header
// lines ("name:", "comment:", "expect: success | bad mac | malformed |
// expired", "now:", and for successes "key:" and the cursor's fields), a blank
// line, then the input on one line (Go-quoted when it is not plain base64url),
// then a blank line. Blocks of '#' lines are prose. They are written by
// generateVectors with an independent implementation of the format (seal,
// testBody), so they pin the wire format: `go test ./cursor -run TestVectors
// -update` rewrites the file, and a diff in review shows any format change.

var update = flag.Bool("update", false, "rewrite testdata/vectors.txt from generateVectors")

const (
	vectorsFile = "testdata/vectors.txt"
	keysFile    = "testdata/keys_DO_NOT_USE.txt"
)

// Test keys: k_n = SHA-256("heyaira cursor test key n DO NOT USE"). k2 and k1
// are in keysFile (k2 signs); k3 is unknown to the test codec.
var testKeys = map[string]string{
	"k1": "7b54979cbfd8bb7856e67058157da6c6e6d927eab0912d671246b2dae7a17e5f",
	"k2": "6270e6040450b7a33678792d856f3d9c52ab0735b0107f7b516a3c02c2291176",
	"k3": "bba6e4f70a32176cc0b985d29270fd7c7b476160006b95951975f0c78e32de5b",
}

func testKey(tb testing.TB, name string) []byte {
	tb.Helper()
	k, err := hex.DecodeString(testKeys[name])
	if err != nil || len(k) != 32 {
		tb.Fatalf("test key %q: %v", name, err)
	}
	return k
}

// newTestCodec is the codec of keysFile: k2 signs, k1 verifies.
func newTestCodec(tb testing.TB) *Codec {
	tb.Helper()
	data, err := os.ReadFile(keysFile)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := ParseKeys(data)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

type vector struct {
	name, expect string
	comments     []string
	now          time.Time
	key          string // success only: which test key signed
	want         Cursor // success only
	input        string
}

func loadVectors(tb testing.TB) []vector {
	tb.Helper()
	data, err := os.ReadFile(vectorsFile)
	if err != nil {
		tb.Fatal(err)
	}
	var blocks []string
	for _, b := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
		if !isProse(b) {
			blocks = append(blocks, b)
		}
	}
	if len(blocks)%2 != 0 {
		tb.Fatalf("%s: %d blocks, want header/input pairs", vectorsFile, len(blocks))
	}
	var vs []vector
	for i := 0; i < len(blocks); i += 2 {
		vs = append(vs, parseVector(tb, blocks[i], blocks[i+1]))
	}
	return vs
}

func isProse(block string) bool {
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

func parseVector(tb testing.TB, header, input string) vector {
	tb.Helper()
	var v vector
	for _, line := range strings.Split(header, "\n") {
		k, val, ok := strings.Cut(line, ":")
		val = strings.TrimPrefix(val, " ")
		if strings.HasPrefix(val, `"`) {
			val = mustUnquote(tb, val)
		}
		var err error
		switch k {
		case "name":
			v.name = val
		case "comment":
			v.comments = append(v.comments, val)
		case "expect":
			v.expect = val
		case "now":
			v.now, err = time.Parse(time.RFC3339, val)
		case "key":
			v.key = val
		case "kind":
			v.want.Kind = val
		case "project":
			v.want.Project = val
		case "principal":
			v.want.Principal = val
		case "source":
			v.want.Source = val
		case "commit":
			v.want.Commit = val
		case "path":
			v.want.Path = val
		case "offset":
			v.want.Offset, err = strconv.ParseInt(val, 10, 64)
		case "file_sha256":
			v.want.FileSHA256 = val
		case "expires":
			v.want.Expires, err = time.Parse(time.RFC3339, val)
		default:
			ok = false
		}
		if !ok || err != nil {
			tb.Fatalf("%s: bad header line %q: %v", vectorsFile, line, err)
		}
	}
	if strings.Contains(input, "\n") {
		tb.Fatalf("%s: vector %q: input must be one line", vectorsFile, v.name)
	}
	if strings.HasPrefix(input, `"`) {
		input = mustUnquote(tb, input)
	}
	v.input = input
	return v
}

func mustUnquote(tb testing.TB, s string) string {
	tb.Helper()
	u, err := strconv.Unquote(s)
	if err != nil {
		tb.Fatalf("%s: bad quoted string %q", vectorsFile, s)
	}
	return u
}

func TestVectors(t *testing.T) {
	if *update {
		if err := os.WriteFile(vectorsFile, []byte(formatVectors(generateVectors(t))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), formatVectors(generateVectors(t)); got != want {
		t.Errorf("%s differs from generateVectors; review and run go test ./cursor -run TestVectors -update", vectorsFile)
	}
	c := newTestCodec(t)
	for _, v := range loadVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			got, reason := c.decode(v.input, v.now)
			pub, err := c.Decode(v.input, v.now)
			switch v.expect {
			case "success":
				if reason != nil || err != nil {
					t.Fatalf("decode: %v, Decode: %v; want success", reason, err)
				}
				if diff := cmp.Diff(v.want, got); diff != "" {
					t.Errorf("decode mismatch (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(v.want, pub); diff != "" {
					t.Errorf("Decode mismatch (-want +got):\n%s", diff)
				}
				// The test codec's key for this vector re-encodes it exactly.
				k := c.byID[keyID(testKey(t, v.key))]
				if got := k.encode(v.want); got != v.input {
					t.Errorf("encode with %s = %q, want the vector's input", v.key, got)
				}
				if v.key == "k2" && c.Encode(v.want) != v.input {
					t.Errorf("Encode differs from the vector's input")
				}
			case "expired", "bad mac", "malformed":
				want := map[string]error{"expired": ErrExpired, "bad mac": errBadMAC, "malformed": errMalformed}[v.expect]
				if reason != want {
					t.Errorf("decode reason = %v, want %v", reason, want)
				}
				wantPub := ErrInvalid
				if want == ErrExpired {
					wantPub = ErrExpired
				}
				if err != wantPub || pub != (Cursor{}) {
					t.Errorf("Decode = %+v, %v; want zero Cursor, %v", pub, err, wantPub)
				}
			default:
				t.Fatalf("unknown expect %q", v.expect)
			}
		})
	}
}

// testBody and seal implement the wire format a second time, independently of
// encode, for the vectors and the fuzz targets.
func testBody(c Cursor) []byte {
	var b []byte
	for _, f := range []string{c.Kind, c.Project, c.Principal, c.Source, c.Commit, c.Path, c.FileSHA256} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(f)))
		b = append(b, f...)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(c.Offset))
	return binary.BigEndian.AppendUint64(b, uint64(c.Expires.Unix()))
}

func seal(secret []byte, ver byte, id []byte, body []byte, lbl string) string {
	msg := append(append([]byte{ver}, id...), body...)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(lbl))
	m.Write(msg)
	return base64.RawURLEncoding.EncodeToString(m.Sum(msg))
}

func testID(secret []byte) []byte {
	s := sha256.Sum256(secret)
	return s[:4]
}

// sealWith signs body the way version 1 does, with test key name.
func sealWith(tb testing.TB, name string, body []byte) string {
	tb.Helper()
	k := testKey(tb, name)
	return seal(k, 1, testID(k), body, "heyaira cursor v1\x00")
}

func mustRaw(tb testing.TB, s string) []byte {
	tb.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

func formatVectors(vs []vector) string {
	var b strings.Builder
	b.WriteString(`# Cursor test vectors, generated by generateVectors in vectors_test.go with the
# test keys of keys_DO_NOT_USE.txt (k2 signs, k1 verifies, k3 is unknown).
# Rewrite with: go test ./cursor -run TestVectors -update
`)
	for _, v := range vs {
		b.WriteString("\n")
		line := func(k, val string) {
			if val == "" {
				return
			}
			if strconv.Quote(val) != `"`+val+`"` || strings.HasPrefix(val, `"`) || strings.TrimSpace(val) != val {
				val = strconv.Quote(val)
			}
			b.WriteString(k + ": " + val + "\n")
		}
		line("name", v.name)
		for _, c := range v.comments {
			line("comment", c)
		}
		line("expect", v.expect)
		line("now", v.now.UTC().Format(time.RFC3339))
		if v.expect == "success" {
			w := v.want
			line("key", v.key)
			line("kind", w.Kind)
			line("project", w.Project)
			line("principal", w.Principal)
			line("source", w.Source)
			line("commit", w.Commit)
			line("path", w.Path)
			line("offset", strconv.FormatInt(w.Offset, 10))
			line("file_sha256", w.FileSHA256)
			line("expires", w.Expires.UTC().Format(time.RFC3339))
		}
		in := v.input
		if in == "" || strings.IndexFunc(in, func(r rune) bool { return !strings.ContainsRune(b64Alphabet, r) }) >= 0 {
			in = strconv.Quote(in)
		}
		b.WriteString("\n" + in + "\n")
	}
	return b.String()
}
