package hash

import "bytes"

// Changes to a packed buffer are made in place: the changed pair and the pair after it (whose
// front coding depends on its predecessor) are re-encoded and spliced in, so a change costs one
// scan and one move of the bytes behind it, like a listpack's.

// editor is the neighbourhood of one pair of a packed buffer, rebuilt so that the pair can be
// replaced or removed and its successor re-encoded against its new predecessor. Its columns
// hold elements inline, so an editor on the stack allocates nothing.
type editor struct {
	hd      header
	pf, pv  column // the pair before the target; empty before the first pair
	cv      column // the target's value
	nf, nv  column // the pair after the target
	start   int    // the target's offset (the end of the pairs when it was not found)
	nextEnd int    // the offset after the pair following the target (or after the target)
	ttl     int64  // the target's TTL
	nttl    int64
	hasNext bool
}

// locate walks the pairs up to field p and reports whether it was found. When it was not, the
// editor is positioned for an append: pf and pv hold the last pair.
func (e *editor) locate(b, p []byte) bool {
	e.hd = readHeader(b)
	withTTL := e.hd.ttl()
	pos := e.hd.size
	for i := range e.hd.count {
		s, suf, next := readElem(b, pos)
		vs, vsuf, vnext := readElem(b, next)
		ttl, end := readTTL(b, vnext, withTTL)
		if pf := e.pf.bytes(); s+len(suf) == len(p) && bytes.Equal(pf[:s], p[:s]) && bytes.Equal(suf, p[s:]) {
			e.start, e.nextEnd, e.ttl = pos, end, ttl
			e.cv.set(e.pv.bytes()[:vs], vsuf)
			e.hasNext = i+1 < e.hd.count
			if e.hasNext {
				ns, nsuf, nnext := readElem(b, end)
				nvs, nvsuf, nvnext := readElem(b, nnext)
				e.nf.set(p[:ns], nsuf)
				e.nv.set(e.cv.bytes()[:nvs], nvsuf)
				e.nttl, e.nextEnd = readTTL(b, nvnext, withTTL)
			}
			return true
		}
		e.pf.push(s, suf)
		e.pv.push(vs, vsuf)
		pos = end
	}
	e.start, e.nextEnd, e.hasNext = pos, pos, false
	return false
}

// rewrite replaces the located pair with (f, v, ttl), or appends it when locate found nothing,
// or removes the pair when remove is set; the following pair is re-encoded after it. f and v
// must not alias b.
func (e *editor) rewrite(b, f, v []byte, ttl int64, remove bool) []byte {
	withTTL := e.hd.ttl()
	pf, pv := e.pf.bytes(), e.pv.bytes()
	n := 0
	if remove {
		f, v = pf, pv // the successor now follows the predecessor
	} else {
		n = pairLen(pf, pv, f, v, ttl, withTTL)
	}
	nn := 0
	if e.hasNext {
		nn = pairLen(f, v, e.nf.bytes(), e.nv.bytes(), e.nttl, withTTL)
	}
	b = splice(b, e.start, e.nextEnd, n+nn)
	if !remove {
		putPair(b[e.start:], pf, pv, f, v, ttl, withTTL)
	}
	if e.hasNext {
		putPair(b[e.start+n:], f, v, e.nf.bytes(), e.nv.bytes(), e.nttl, withTTL)
	}
	return b
}

// packedSet sets field f to v and reports whether f was added. keepTTL keeps an existing
// field's TTL (HINCRBY); otherwise the field becomes persistent, as HSET makes it.
func packedSet(b, f, v []byte, keepTTL bool) ([]byte, bool) {
	if len(b) == 0 {
		return packedFirst(f, v), true
	}
	var e editor
	found := e.locate(b, f)
	var ttl int64
	if found && keepTTL {
		ttl = e.ttl
	}
	b = e.rewrite(b, f, v, ttl, false)
	if !found {
		e.hd.count++
		b = writeHeader(b, e.hd)
	}
	return b, !found
}

// packedDelete removes field f and reports whether it was there.
func packedDelete(b, f []byte) ([]byte, bool) {
	var e editor
	if !e.locate(b, f) {
		return b, false
	}
	b = e.rewrite(b, nil, nil, 0, true)
	e.hd.count--
	return writeHeader(b, e.hd), true
}

// packedSetTTL sets field f's TTL (unix ms; 0 removes it) and reports whether f exists. The
// buffer must carry TTLs (see packedRebuild).
func packedSetTTL(b, f []byte, at int64) ([]byte, bool) {
	var e editor
	if !e.locate(b, f) {
		return b, false
	}
	b = e.rewrite(b, f, e.cv.bytes(), at, false)
	if at != 0 && (e.hd.minTTL == 0 || at < e.hd.minTTL) {
		e.hd.minTTL = at
		b = writeHeader(b, e.hd)
	}
	return b, true
}

// packedExpire removes the pairs whose TTL is at or before now (unix ms) and returns how many.
func packedExpire(b []byte, now int64) ([]byte, int) {
	hd := readHeader(b)
	if !hd.ttl() || hd.minTTL == 0 || hd.minTTL > now {
		return b, 0
	}
	expired, earliest := 0, int64(0)
	pos := hd.size
	for range hd.count {
		_, _, next := readElem(b, pos)
		_, _, vnext := readElem(b, next)
		var ttl int64
		ttl, pos = readTTL(b, vnext, true)
		switch {
		case ttl == 0:
		case ttl <= now:
			expired++
		case earliest == 0 || ttl < earliest:
			earliest = ttl
		}
	}
	if expired == 0 { // minTTL was stale: a TTL was removed since
		hd.minTTL = earliest
		return writeHeader(b, hd), 0
	}
	return packedRebuild(b, now, true), expired
}

// packedRebuild re-encodes b into a new buffer, leaving out the pairs expired at now (unix ms;
// 0 keeps them all), with TTLs when withTTL. It measures first so that the new buffer is
// allocated once at its size.
func packedRebuild(b []byte, now int64, withTTL bool) []byte {
	hd := header{}
	if withTTL {
		hd.flags = flagTTL
	}
	size := 0
	var it packedIter
	var of, ov column // the last pair written
	for it.init(b); it.next(); {
		if it.expired(now) {
			continue
		}
		size += pairLen(of.bytes(), ov.bytes(), it.f.bytes(), it.v.bytes(), it.ttl, withTTL)
		of.set(it.f.bytes(), nil)
		ov.set(it.v.bytes(), nil)
		hd.count++
		if it.ttl != 0 && (hd.minTTL == 0 || it.ttl < hd.minTTL) {
			hd.minTTL = it.ttl
		}
	}
	hd.size = hd.encodedLen()
	out := alloc(hd.size + size)
	hd.put(out)
	pos := hd.size
	of.n, ov.n = 0, 0
	for it.init(b); it.next(); {
		if it.expired(now) {
			continue
		}
		pos += putPair(out[pos:], of.bytes(), ov.bytes(), it.f.bytes(), it.v.bytes(), it.ttl, withTTL)
		of.set(it.f.bytes(), nil)
		ov.set(it.v.bytes(), nil)
	}
	return out
}

// packedIter walks a packed buffer's pairs in order, rebuilding each field and value.
type packedIter struct {
	b       []byte
	pos     int
	left    int
	withTTL bool
	ttl     int64
	f, v    column
}

func (it *packedIter) init(b []byte) {
	hd := readHeader(b)
	it.b, it.pos, it.left, it.withTTL = b, hd.size, hd.count, hd.ttl()
	it.f.n, it.v.n = 0, 0
}

func (it *packedIter) next() bool {
	if it.left == 0 {
		return false
	}
	it.left--
	s, suf, next := readElem(it.b, it.pos)
	it.f.push(s, suf)
	s, suf, next = readElem(it.b, next)
	it.v.push(s, suf)
	it.ttl, it.pos = readTTL(it.b, next, it.withTTL)
	return true
}

func (it *packedIter) expired(now int64) bool { return now != 0 && it.ttl != 0 && it.ttl <= now }
