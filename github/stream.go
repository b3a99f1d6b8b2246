package github

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
)

// Decoding while the body arrives. Reading a 1 MiB answer (about 1.45 MB of
// JSON over TLS) takes a millisecond or two, most of it waiting for the next
// record, and decoding and hashing it afterwards took as long again. For a
// large answer readContents therefore decodes the content string as it
// arrives, and keeps only what it decoded: the members around the content
// are kept, the base64 is not. A read then holds the 1 MiB file, not the
// 1.45 MB answer, and when the last byte is in only the tail is left to do.
//
// It must never change an answer, so it is confined to the simplest content:
// base64 characters, GitHub's line breaks (\n, \r) and \/. Whatever else
// comes (another escape, a character base64 refuses, padding before the end,
// more bytes than a file may have, the end of the body inside the string)
// abandons the stream: what it consumed is put back, as the base64 it was
// (re-encoding what it decoded gives exactly those characters, since the
// strict decoder accepts one spelling per byte; the line breaks it dropped
// are dropped by the ordinary decoder too), and the ordinary path
// (decodeContents) runs on that, reaching the answer and the error it
// always did.
//
// When the stream reaches the closing quote, the body is kept with the
// content string emptied, and parsed as always: every member is checked
// strictly, in order. The streamed content stands in for the string if the
// parser finds it exactly where the stream found it; the size check then
// gives the errors decodeContent would (stream.outcome).
//
// The members before the content are found with the same strict scanner,
// once the first prefixWindow bytes are in. GitHub sends content last (after
// type, encoding, size, name, path, sha and the URLs), so the size, which
// the git blob SHA-1 hashes first, is known when decoding starts; when it
// comes later, the SHA-1 waits for the end (digests).

const (
	// streamFrom is the Content-Length from which an answer is decoded while
	// it arrives; smaller ones are read first.
	streamFrom = 256 << 10
	// prefixWindow is how much must have arrived before the members ahead of
	// the content are looked at.
	prefixWindow = 16 << 10
	// batch is how many base64 characters are decoded at a time: a multiple
	// of 4 (whole quanta) and of 60 (GitHub's lines).
	batch = 65520
)

// readContents reads a contents answer through MaxContentsResponse, with
// readBody's limits and errors, and decodes it as decodeContentsSum does.
// With lend, a streamed file is decoded into a pooled buffer, returned as
// lent when the file is in it (lend.go).
func readContents(resp *http.Response, wantPath string, withSHA256, lend bool) (*File, [sha256.Size]byte, *[]byte, error) {
	return decodeStreamLending(resp.Request.Context(), resp.Body, resp.ContentLength, wantPath, withSHA256,
		streamFrom, prefixWindow, lend)
}

// decodeStream is readContents on a body reader and its Content-Length (-1
// when unknown).
func decodeStream(ctx context.Context, body io.Reader, contentLength int64, wantPath string, withSHA256 bool) (*File, [sha256.Size]byte, error) {
	return decodeStreamFrom(ctx, body, contentLength, wantPath, withSHA256, streamFrom, prefixWindow)
}

// decodeStreamFrom is decodeStream with the thresholds as arguments, so
// tests can stream small bodies.
func decodeStreamFrom(ctx context.Context, body io.Reader, contentLength int64, wantPath string, withSHA256 bool,
	from int64, window int) (*File, [sha256.Size]byte, error) {
	f, sum, _, err := decodeStreamLending(ctx, body, contentLength, wantPath, withSHA256, from, window, false)
	return f, sum, err
}

// decodeStreamLending is decodeStreamFrom that, with lend, decodes a
// streamed file into a pooled buffer. The buffer is returned as lent if the
// file is in it, and otherwise given back here, after the digests have
// stopped reading it.
func decodeStreamLending(ctx context.Context, body io.Reader, contentLength int64, wantPath string, withSHA256 bool,
	from int64, window int, lend bool) (f *File, sum [sha256.Size]byte, lent *[]byte, err error) {
	var none [sha256.Size]byte
	const limit = MaxContentsResponse
	if contentLength > limit {
		return nil, none, nil, fmt.Errorf("%w: Content-Length %d over %d", ErrResponseTooLarge, contentLength, limit)
	}
	// Deferred first, so run last: after the digests have finished.
	defer func() {
		if lent != nil && (err != nil || !lentHolds(lent, f.Content)) {
			returnBuffer(lent)
			lent = nil
		}
	}()
	whole := int64(bytes.MinRead)
	if contentLength >= 0 {
		// Room for the final zero-length read, so the buffer never grows.
		whole = contentLength + bytes.MinRead
	}
	maybe := contentLength >= from
	size := whole
	if maybe {
		size = int64(window) + 2*bytes.MinRead // grown to whole if the stream does not start
	}
	buf := make([]byte, 0, size)
	r := io.LimitReader(body, limit+1)
	var st *contentStream
	received := 0
	var readErr error
	for {
		if len(buf) == cap(buf) {
			grown := max(int(whole), 2*cap(buf)+bytes.MinRead)
			if st != nil {
				grown = 2*cap(buf) + bytes.MinRead // the stream keeps the buffer small
			}
			buf = append(make([]byte, 0, grown), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		received += n
		if maybe && len(buf) >= window {
			maybe = false
			st = startStream(buf, withSHA256, lend)
			if st != nil {
				lent = st.lent
			}
		}
		if st != nil && !st.done {
			buf = st.feed(buf)
			if st.failed {
				buf, st = st.giveBack(buf, whole), nil
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
	}
	if st != nil {
		defer st.digests.finish(0) // stops its goroutines if the result is not taken
		if !st.done {              // the body ended inside the content string
			buf, st = st.giveBack(buf, whole), nil
		}
	}
	if received > limit {
		return nil, none, lent, fmt.Errorf("%w: body over %d bytes", ErrResponseTooLarge, limit)
	}
	if readErr != nil {
		return nil, none, lent, fmt.Errorf("%w: reading body: %s", ErrUnavailable, transportError(ctx, readErr))
	}
	f, sum, err = decodeContentsStreamed(buf, wantPath, withSHA256, st)
	return f, sum, lent, err
}

// contentStream is the content string decoded while it arrives.
type contentStream struct {
	start   int    // index in the body of the string's first character
	i       int    // next character of the body to look at
	b64     []byte // base64 characters not decoded yet
	total   int    // base64 characters seen so far
	out     []byte // the content decoded so far; its capacity never changes
	size    int    // the size the answer announced before the content, or -1
	digests *digests
	lent    *[]byte // out's pooled buffer, when lent (lend.go)
	failed  bool    // abandoned: giveBack restores what was consumed
	done    bool    // the closing quote came: the body holds an empty string instead
}

// startStream finds where the content string starts, and prepares to decode
// it, or returns nil when the answer is not one to stream. With lend it
// decodes into a pooled buffer (lend.go).
func startStream(buf []byte, withSHA256, lend bool) *contentStream {
	start, size, ok := locateContent(buf)
	if !ok || size > MaxFileSize {
		return nil
	}
	room := MaxFileSize
	if size >= 0 {
		room = int(size)
	}
	// Padded base64 decodes into DecodedLen bytes before the padding is
	// taken off: 2 more at most.
	st := &contentStream{start: start, i: start, size: int(size), b64: make([]byte, 0, batch+lineLen)}
	if lend {
		st.lent = borrowBuffer()
		st.out = (*st.lent)[: 0 : room+2]
	} else {
		st.out = make([]byte, 0, room+2)
	}
	st.digests = startDigests(st.out[:cap(st.out)], st.size, true, withSHA256)
	return st
}

// locateContent parses the members ahead of "content" with the strict
// scanner and returns the index of the content string's first character,
// and the size if a size member came first (else -1). It gives up (ok
// false) on anything it does not fully understand: the end of what has
// arrived, a syntax error, a content that is not a string.
func locateContent(buf []byte) (start int, size int64, ok bool) {
	s := scanner{b: buf}
	size = -1
	if !s.eat('{') {
		return 0, 0, false
	}
	for {
		if s.next() != '"' {
			return 0, 0, false
		}
		raw, esc, ok := s.str()
		if !ok || !s.eat(':') {
			return 0, 0, false
		}
		switch unquote(raw, esc) {
		case "content":
			if s.next() != '"' {
				return 0, 0, false
			}
			return s.i + 1, size, true
		case "size":
			v, ok := s.intOrNull()
			if !ok || v == nil || *v < 0 {
				return 0, 0, false
			}
			size = *v
		default:
			if !s.skipValue() {
				return 0, 0, false
			}
		}
		if !s.eat(',') {
			return 0, 0, false
		}
	}
}

// feed decodes what has arrived of the content string, whole lines of
// GitHub's layout at a time and anything else character by character, and
// returns buf without what it consumed: the members before the content and
// what has not been looked at yet. At the closing quote it leaves buf with
// an empty content string, and done set.
func (st *contentStream) feed(buf []byte) []byte {
	for !st.failed && st.i < len(buf) {
		if st.i+lineLen <= len(buf) && isLine(buf[st.i:st.i+lineLen]) {
			st.b64 = append(st.b64, buf[st.i:st.i+lineLen-2]...)
			st.i += lineLen
		} else {
			switch c := buf[st.i]; c {
			case '"':
				if st.decode(true); st.failed {
					return buf
				}
				st.done = true
				return append(buf[:st.start], buf[st.i:]...)
			case '\\':
				if st.i+1 == len(buf) {
					return st.drop(buf) // the escape's second character has not arrived
				}
				switch buf[st.i+1] {
				case 'n', 'r':
				case '/':
					st.b64 = append(st.b64, '/')
				default:
					st.failed = true
					return buf
				}
				st.i += 2
			default:
				if !isBase64(c) { // a raw control character among them: see decode
					st.failed = true
					return buf
				}
				st.b64 = append(st.b64, c)
				st.i++
			}
		}
		if len(st.b64) >= batch+4 { // a later quantum exists: this batch is not the last
			st.decode(false)
		}
	}
	if st.failed {
		return buf
	}
	return st.drop(buf)
}

// drop removes the consumed characters from buf.
func (st *contentStream) drop(buf []byte) []byte {
	buf = append(buf[:st.start], buf[st.i:]...)
	st.i = st.start
	return buf
}

func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}

// isLine reports whether l (62 bytes) is 60 characters without a backslash
// or a quote, then the escape \n.
func isLine(l []byte) bool {
	return l[60] == '\\' && l[61] == 'n' && plainLine(l[:60], true)
}

// decode decodes a batch (or, at the end, everything left) and hands it to
// the digests. Every character must count: a batch must decode to three
// bytes per four characters, less the padding of the last. So padding before
// the end, which the whole-string decoder refuses, abandons the stream, and
// so does a raw CR or LF in a line, which base64 would silently skip but
// which makes the JSON malformed. The characters leave b64 only once
// decoded, so giveBack finds everything.
func (st *contentStream) decode(last bool) {
	n := batch
	if last {
		n = len(st.b64)
	}
	src := st.b64[:n]
	at := len(st.out)
	if at+base64.StdEncoding.DecodedLen(n) > cap(st.out) {
		st.failed = true
		return
	}
	want := n / 4 * 3
	if last && n > 0 && src[n-1] == '=' {
		want--
		if n > 1 && src[n-2] == '=' {
			want--
		}
	}
	got, err := base64.StdEncoding.Strict().Decode(st.out[at:cap(st.out)], src)
	if err != nil || got != want {
		st.failed = true
		return
	}
	st.out = st.out[:at+got]
	st.total += n
	st.digests.add(at, at+got)
	st.b64 = append(st.b64[:0], st.b64[n:]...)
}

// giveBack abandons the stream and returns the body with the content string
// as the base64 characters the stream consumed (its decoded part encoded
// again, then what it had not decoded yet) followed by what it had not
// looked at, in a buffer with room for the rest of the body.
func (st *contentStream) giveBack(buf []byte, whole int64) []byte {
	st.digests.finish(0)
	rest := buf[st.i:]
	out := make([]byte, 0, max(int(whole), len(buf)+base64.StdEncoding.EncodedLen(len(st.out))+len(st.b64)+bytes.MinRead))
	out = append(out, buf[:st.start]...)
	out = base64.StdEncoding.AppendEncode(out, st.out)
	out = append(out, st.b64...)
	return append(out, rest...)
}

// outcome is what decodeContent would return for the streamed content and
// the size the parse found, or ok false when the parse did not find the
// content string where the stream emptied it. The streamed characters are
// all base64 or line breaks, so the only failures left are the two lengths.
func (st *contentStream) outcome(obj contentsObject, size int) (d decoded, ok bool, err error) {
	if st == nil || !st.done || obj.contentKind != '"' || obj.contentStart != st.start || len(obj.content) != 0 {
		return d, false, nil
	}
	if st.total != base64.StdEncoding.EncodedLen(size) {
		return d, true, fmt.Errorf("%w: content length does not match size", ErrInconsistent)
	}
	if len(st.out) != size || (st.size >= 0 && st.size != size) {
		return d, true, fmt.Errorf("%w: decoded length does not match size", ErrInconsistent)
	}
	st.digests.finish(size)
	d.take(st.digests)
	d.content = st.out[:size:size]
	return d, true, nil
}
