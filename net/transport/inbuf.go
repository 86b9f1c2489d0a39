package transport

// Buffer sizes. minBuf matches Redis's PROTO_IOBUF_LEN: one read of a typical pipelined batch fits.
// A buffer that grew past maxIdleBuf for a large request is dropped once it empties, so one big
// value does not pin its memory to an idle connection.
const (
	minBuf     = 16 << 10
	maxIdleBuf = 64 << 10
)

// inbuf is one connection's input buffer, shared by both engines.
//
// Layout: buf[0:r] was skipped but not yet released, buf[r:w] is unread, buf[w:] is free space that the
// engine reads into. The rules that keep peeked slices valid until release:
//   - bytes below w are never written again before release;
//   - growing allocates a new array and copies only the unread bytes, leaving the old array (and every
//     slice into it) untouched for the garbage collector;
//   - only release moves bytes in place.
//
// Memory follows bytes that arrived: the buffer grows only when it is full of received data, and then to
// twice the unread bytes (or to fit bytes the engine already holds), never to a length a peer declared.
// Not safe for concurrent use: only the conn's own goroutine touches it (see Conn), netpoll's poller
// as it moves input in before an inline Serve included.
type inbuf struct {
	buf  []byte
	r, w int
}

// Len is the number of unread bytes.
func (b *inbuf) Len() int { return b.w - b.r }

// peek returns the next n unread bytes; the caller guarantees 0 <= n <= Len.
func (b *inbuf) peek(n int) []byte { return b.buf[b.r : b.r+n : b.r+n] }

// skip consumes n unread bytes; it reports false when fewer than n are buffered.
func (b *inbuf) skip(n int) bool {
	if n < 0 || n > b.w-b.r {
		return false
	}
	b.r += n
	return true
}

// release frees the skipped bytes. Slices returned by peek before the call become invalid.
func (b *inbuf) release() {
	if b.r == b.w {
		b.r, b.w = 0, 0
		if len(b.buf) > maxIdleBuf {
			b.buf = nil
		}
		return
	}
	if b.r > 0 {
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
}

// space returns free space of at least min bytes to read into, growing the buffer if needed; the engine
// then calls commit with the number of bytes it stored.
func (b *inbuf) space(min int) []byte {
	if len(b.buf)-b.w < min {
		b.grow(min)
	}
	return b.buf[b.w:]
}

// commit records that n bytes were stored at the start of the last space.
func (b *inbuf) commit(n int) { b.w += n }

// grow moves the unread bytes to a fresh array with at least min free bytes after them. The fresh array is
// twice the unread bytes so that a request arriving in many small reads is copied O(1) times per byte.
func (b *inbuf) grow(min int) {
	unread := b.w - b.r
	size := max(minBuf, 2*unread, unread+min)
	nb := make([]byte, size)
	copy(nb, b.buf[b.r:b.w])
	b.buf, b.r, b.w = nb, 0, unread
}
