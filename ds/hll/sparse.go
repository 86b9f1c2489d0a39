package hll

// A sparse body is a run of opcodes: ZERO (00llllll: 1..64 zero registers), XZERO (01llllll
// llllllll: 1..16384 zero registers) and VAL (1vvvvvll: 1..4 registers of value 1..32).

// op is one decoded opcode: run registers of value val (0 for ZERO and XZERO).
type op struct {
	run int
	val uint8
}

// opAt decodes the opcode at b[p] and returns it with its size in bytes. An XZERO cut by the end
// of b reads its second byte as 0, as Redis reads the string's terminating NUL.
func opAt(b []byte, p int) (op, int) {
	c := b[p]
	switch {
	case c&0x80 != 0:
		return op{run: int(c&3) + 1, val: (c>>2)&0x1f + 1}, 1
	case c&0x40 == 0:
		return op{run: int(c&0x3f) + 1}, 1
	}
	var lo byte
	if p+1 < len(b) {
		lo = b[p+1]
	}
	return op{run: int(c&0x3f)<<8 | int(lo) + 1}, 2
}

func putVal(dst []byte, val uint8, run int) { dst[0] = 0x80 | (val-1)<<2 | byte(run-1) }

func putZero(dst []byte, run int) { dst[0] = byte(run - 1) }

func putXZero(dst []byte, run int) {
	dst[0] = 0x40 | byte((run-1)>>8)
	dst[1] = byte(run - 1)
}

// putZeros writes a run of zero registers as ZERO or XZERO and returns the bytes written.
func putZeros(dst []byte, run int) int {
	if run > zeroMaxLen {
		putXZero(dst, run)
		return 2
	}
	putZero(dst, run)
	return 1
}

// sparseSet is Redis's hllSparseSet: it finds the opcode covering register index, splits it
// around the new value (at most XZERO-VAL-XZERO), merges equal VALs next to the change, and turns
// the HLL dense when a value passes 32 or the body would outgrow maxSparse() bytes.
func sparseSet(b []byte, index int, count uint8, maxSparse func() int) ([]byte, bool, bool) {
	if count > valMaxValue {
		return promote(b, index, count)
	}
	// Step 1: the opcode covering index, by the run lengths alone (the hot loop of a sparse add).
	p, prev, first, span, size := HeaderSize, -1, 0, 0, 1
	for p < len(b) {
		switch c := b[p]; {
		case c&0x80 != 0:
			span, size = int(c&3)+1, 1
		case c&0x40 == 0:
			span, size = int(c)+1, 1
		case p+1 < len(b):
			span, size = int(c&0x3f)<<8|int(b[p+1])+1, 2
		default:
			span, size = int(c&0x3f)<<8+1, 2 // cut by the end: see opAt
		}
		if index < first+span {
			break
		}
		prev = p
		p += size
		first += span
	}
	if span == 0 || p >= len(b) {
		return b, false, false
	}
	cur, _ := opAt(b, p)
	// Step 2: the trivial updates, in place.
	switch {
	case cur.val != 0 && cur.val >= count:
		return b, false, true
	case cur.val != 0 && cur.run == 1, cur.val == 0 && size == 1 && cur.run == 1:
		putVal(b[p:], count, 1)
		return mergeVals(b, prev), true, true
	}
	// Step 3: the split.
	var seq [5]byte
	n, last := 0, first+span-1
	if cur.val == 0 {
		if index != first {
			n += putZeros(seq[n:], index-first)
		}
		putVal(seq[n:], count, 1)
		n++
		if index != last {
			n += putZeros(seq[n:], last-index)
		}
	} else {
		if index != first {
			putVal(seq[n:], cur.val, index-first)
			n++
		}
		putVal(seq[n:], count, 1)
		n++
		if index != last {
			putVal(seq[n:], cur.val, last-index)
			n++
		}
	}
	delta := n - size
	if delta > 0 && len(b)+delta > maxSparse() {
		return promote(b, index, count)
	}
	b = splice(b, p, size, seq[:n])
	return mergeVals(b, prev), true, true
}

// splice replaces the size bytes at p with seq. An opcode cut by the end of b counts as whole,
// as in Redis, whose string then ends where it would have.
func splice(b []byte, p, size int, seq []byte) []byte {
	newLen := len(b) + len(seq) - size
	tail := b[min(p+size, len(b)):]
	if newLen > cap(b) {
		nb := make([]byte, newLen, newLen+newLen/4+8)
		copy(nb, b[:p])
		if len(tail) > 0 {
			copy(nb[p+len(seq):], tail)
		}
		copy(nb[p:], seq)
		return nb
	}
	b = b[:max(len(b), newLen)]
	if len(tail) > 0 { // then p+len(seq) is within newLen
		copy(b[p+len(seq):], tail)
	}
	copy(b[p:], seq)
	return b[:newLen]
}

// mergeVals is Redis's step 4: from the opcode before the change (or the first), for up to five
// opcodes, two adjacent VALs of one value whose runs fit one VAL become one.
func mergeVals(b []byte, prev int) []byte {
	p := HeaderSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < len(b) && scan > 0; scan-- {
		c := b[p]
		switch {
		case c&0xc0 == 0x40:
			p += 2
			continue
		case c&0x80 == 0:
			p++
			continue
		}
		if p+1 < len(b) && b[p+1]&0x80 != 0 {
			v1, _ := opAt(b, p)
			v2, _ := opAt(b, p+1)
			if v1.val == v2.val && v1.run+v2.run <= valMaxLen {
				putVal(b[p+1:], v1.val, v1.run+v2.run)
				copy(b[p:], b[p+1:])
				b = b[:len(b)-1]
				continue // try the merged VAL with the next one
			}
		}
		p++
	}
	return b
}

// promote turns b dense and sets the register there (Redis's "promote" label).
func promote(b []byte, index int, count uint8) ([]byte, bool, bool) {
	d, ok := ToDense(b)
	if !ok {
		return b, false, false
	}
	denseSet(d[HeaderSize:], index, count)
	return d, true, true
}

// ToDense returns b in the dense encoding: b itself when it is dense, else a new value with b's
// header (its magic, unused bytes and cached cardinality) and its registers. ok is false when
// the sparse opcodes do not cover exactly Registers registers.
func ToDense(b []byte) ([]byte, bool) {
	if b[4] == Dense {
		return b, true
	}
	d := make([]byte, DenseSize)
	copy(d, b[:HeaderSize])
	d[4] = Dense
	regs := d[HeaderSize:]
	i := 0
	for p := HeaderSize; p < len(b); {
		o, n := opAt(b, p)
		p += n
		if o.val == 0 {
			i += o.run
			continue
		}
		if i+o.run > Registers {
			return b, false
		}
		for range o.run {
			denseSet(regs, i, o.val)
			i++
		}
	}
	if i != Registers {
		return b, false
	}
	return d, true
}
