// Package backlog is the replication backlog: a ring of the last bytes of the replication stream,
// addressed by stream offset (Redis's repl_backlog). It knows nothing of RESP and has no locks:
// its one user (the primary's stream pump) serialises access.
//
// Offsets follow Redis: the stream's first byte has offset 1 (master_repl_offset counts the bytes
// written, and repl_backlog_first_byte_offset is master_repl_offset+1 when the backlog is empty).
package backlog

// Ring holds the last Size() bytes written, by offset.
type Ring struct {
	buf  []byte
	end  int64 // offset of the last byte written (master_repl_offset)
	hist int64 // bytes held: min(written since the start, len(buf))
}

// New returns a ring of size bytes whose stream ends at offset end (the next byte written has
// offset end+1).
func New(size int, end int64) *Ring {
	return &Ring{buf: make([]byte, max(size, 1)), end: end}
}

// Size is the ring's capacity (repl_backlog_size).
func (r *Ring) Size() int { return len(r.buf) }

// Offset is the offset of the last byte written (master_repl_offset).
func (r *Ring) Offset() int64 { return r.end }

// Histlen is the number of bytes held (repl_backlog_histlen).
func (r *Ring) Histlen() int64 { return r.hist }

// First is the offset of the oldest byte held (repl_backlog_first_byte_offset).
func (r *Ring) First() int64 { return r.end - r.hist + 1 }

// Write appends p to the stream.
func (r *Ring) Write(p []byte) {
	n := int64(len(r.buf))
	if int64(len(p)) > n {
		r.end += int64(len(p)) - n
		p = p[int64(len(p))-n:]
	}
	at := int(r.end % n)
	k := copy(r.buf[at:], p)
	copy(r.buf, p[k:])
	r.end += int64(len(p))
	r.hist = min(r.hist+int64(len(p)), n)
}

// Covers reports whether every byte after offset from (from+1 .. Offset()) is held, so that a
// replica at offset from can continue (PSYNC's +CONTINUE).
func (r *Ring) Covers(from int64) bool { return from <= r.end && from >= r.end-r.hist }

// ReadFrom appends the bytes after offset from to dst, at most max bytes; ok is false when the
// ring no longer holds (or never held) them.
func (r *Ring) ReadFrom(dst []byte, from int64, maxBytes int) (out []byte, ok bool) {
	if !r.Covers(from) {
		return dst, false
	}
	want := min(r.end-from, int64(maxBytes))
	n := int64(len(r.buf))
	at := int(from % n)
	for want > 0 {
		k := min(int64(len(r.buf)-at), want)
		dst = append(dst, r.buf[at:at+int(k)]...)
		want -= k
		at = 0
	}
	return dst, true
}

// Resize changes the capacity (CONFIG SET repl-backlog-size), keeping the newest bytes that fit.
func (r *Ring) Resize(size int) {
	size = max(size, 1)
	if size == len(r.buf) {
		return
	}
	keep := min(r.hist, int64(size))
	old, _ := r.ReadFrom(nil, r.end-keep, int(keep))
	end := r.end
	r.buf, r.end, r.hist = make([]byte, size), end-keep, 0
	r.Write(old)
}

// Reset empties the ring and sets the stream's end to end (a new replication history).
func (r *Ring) Reset(end int64) { r.end, r.hist = end, 0 }
