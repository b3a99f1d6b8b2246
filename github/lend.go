package github

import (
	"context"
	"crypto/sha256"
	"sync"
)

// Lending the decode buffer. A large file is decoded into a buffer of
// MaxFileSize+2 bytes while its answer arrives (stream.go). Allocating one
// per read made the garbage collector the largest cost of a 1 MiB read
// after the hashes: issue 7 measured GOGC=400 taking about 1 ms off the p50
// of a 64 KB fragment of a 1 MiB document. WithFile borrows the buffer from
// a pool instead, for the duration of a callback, and zeroes it before it
// goes back, so no document outlives its read in memory that is reused.
//
// Forgetting to give a buffer back costs nothing but an allocation later;
// giving one back too early would hand one read's bytes to another. So a
// buffer goes back only in two places, both after the digest goroutines,
// which read it, have stopped: decodeStreamLending, when the file it returns
// is not in the buffer, and WithFile, after the callback.

var decodePool = sync.Pool{New: func() any {
	b := make([]byte, MaxFileSize+2)
	return &b
}}

func borrowBuffer() *[]byte { return decodePool.Get().(*[]byte) }

func returnBuffer(b *[]byte) {
	clear(*b)
	decodePool.Put(b)
}

// WithFile is GetFileSHA256 for a caller that needs the content only for a
// moment, as the document tools do (they copy out one fragment): use gets
// the file and the SHA-256 of its content, and WithFile returns use's error,
// or the read's (use is then not called). f.Content may live in a buffer
// lent for the call: it must not be kept or used after use returns, when
// the buffer is zeroed and goes back to be reused.
func (c *Client) WithFile(ctx context.Context, b Binding, path, commitSHA string, use func(f *File, sum [sha256.Size]byte) error) error {
	f, sum, lent, err := c.getFile(ctx, b, path, commitSHA, true, true)
	if err != nil {
		return err
	}
	if lent != nil {
		defer returnBuffer(lent)
	}
	return use(f, sum)
}

// lentHolds reports whether content lies in the lent buffer.
func lentHolds(lent *[]byte, content []byte) bool {
	return lent != nil && len(content) > 0 && &content[0] == &(*lent)[0]
}
