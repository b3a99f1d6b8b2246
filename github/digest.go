package github

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"hash"
	"strconv"
	"sync"
	"unicode/utf8"
)

// digests checks and hashes decoded content piece by piece, as decodeContent
// produces it: the git blob SHA-1, optionally the SHA-256, NUL bytes and
// UTF-8 validity. For a large file the work runs on two goroutines beside the
// base64 decoding, so on an idle second core a 1 MiB read waits for the
// slowest of the three instead of their sum; the CPU spent is the same.
//
// Pieces are ranges of buf, the content's final location, handed over only
// once written; decodeContent writes later pieces strictly after them, so the
// goroutines and the decoder never touch the same bytes.
type digests struct {
	buf      []byte
	blob     hash.Hash // nil while the size, which git hashes first, is unknown
	blobEnd  int       // buf[:blobEnd] went through blob
	sum      hash.Hash // nil unless the SHA-256 is wanted
	nul      bool      // a NUL byte was seen
	invalid  bool      // invalid UTF-8 was seen
	checked  int       // buf[:checked] is known valid UTF-8 (or invalid is set)
	blobCh   chan [2]int
	sumCh    chan [2]int
	wg       sync.WaitGroup
	finished bool
}

// parallelFrom is the size from which digests uses goroutines: below it the
// hand-over costs more than it saves.
const parallelFrom = 2 * chunk

// newDigests prepares for size bytes of content that will appear in buf.
func newDigests(buf []byte, size int, withSHA256 bool) *digests {
	return startDigests(buf, size, size >= parallelFrom, withSHA256)
}

// startDigests is newDigests for content whose size may not be known yet
// (size < 0): the SHA-1, which begins with the size, then waits for finish.
func startDigests(buf []byte, size int, parallel, withSHA256 bool) *digests {
	d := &digests{buf: buf}
	if size >= 0 {
		d.blob = sha1.New()
		d.blob.Write([]byte("blob " + strconv.Itoa(size) + "\x00"))
	}
	if withSHA256 {
		d.sum = sha256.New()
	}
	if !parallel {
		return d
	}
	d.blobCh = make(chan [2]int, 32)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for r := range d.blobCh {
			d.blobPiece(r[0], r[1])
		}
	}()
	if d.sum != nil {
		d.sumCh = make(chan [2]int, 32)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			for r := range d.sumCh {
				d.sum.Write(d.buf[r[0]:r[1]])
			}
		}()
	}
	return d
}

// add hands over buf[a:b], which is final.
func (d *digests) add(a, b int) {
	if d.blobCh == nil {
		d.blobPiece(a, b)
		if d.sum != nil {
			d.sum.Write(d.buf[a:b])
		}
		return
	}
	d.blobCh <- [2]int{a, b}
	if d.sumCh != nil {
		d.sumCh <- [2]int{a, b}
	}
}

// blobPiece is the SHA-1, NUL and UTF-8 work for buf[a:b]. UTF-8 is checked
// up to the last character start in the piece, the rest with the next one:
// cutting before a byte that is not a continuation byte never changes the
// verdict, because no character can continue across such a byte.
func (d *digests) blobPiece(a, b int) {
	p := d.buf[a:b]
	if d.blob != nil {
		d.blob.Write(p)
		d.blobEnd = b
	}
	d.nul = d.nul || bytes.IndexByte(p, 0) >= 0
	cut := b
	for i := b - 1; i >= max(a, b-utf8.UTFMax) && i >= d.checked; i-- {
		if utf8.RuneStart(d.buf[i]) {
			cut = i
			break
		}
	}
	d.invalid = d.invalid || !utf8.Valid(d.buf[d.checked:cut])
	d.checked = cut
}

// finish waits for the goroutines; after it the results may be read.
// end is the content's length: what is left after the last cut is checked.
func (d *digests) finish(end int) {
	if d.finished {
		return
	}
	d.finished = true
	if d.blobCh != nil {
		close(d.blobCh)
		if d.sumCh != nil {
			close(d.sumCh)
		}
		d.wg.Wait()
	}
	if end >= d.checked {
		d.invalid = d.invalid || !utf8.Valid(d.buf[d.checked:end])
	}
	if d.blob == nil { // the size is known now: it is end
		d.blob = sha1.New()
		d.blob.Write([]byte("blob " + strconv.Itoa(end) + "\x00"))
	}
	if d.blobEnd < end {
		d.blob.Write(d.buf[d.blobEnd:end])
		d.blobEnd = end
	}
}
