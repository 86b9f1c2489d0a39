package keyspace

// Warming a batch of lookups. A lookup is a chain of dependent cache misses (bucket, entry, key and
// value bytes); a batch's lookups are independent of one another, so loading one level for every
// key of the batch before the next level lets the CPU wait for all of a level's misses at once.
// These functions only read; the caller holds the shard's token as for any lookup.

// Head returns the first entry of the bucket of hash h.
func (ks *Keyspace) Head(h uint64) *Entry { return *ks.bucket(h) }

// Match walks the chain from e to the entry of key.
func Match(e *Entry, key []byte) *Entry {
	for e != nil && !e.is(key) {
		e = e.next
	}
	return e
}

// warmValueBytes bounds the value bytes Touch reads: a command on a larger value is long enough
// to hide its own misses.
const warmValueBytes = 1024

// Touch reads the first byte of e's key and one byte of every cache line of its string value
// (up to warmValueBytes), and returns a value that depends on them so the loads stay.
func (e *Entry) Touch() uint64 {
	var x uint64
	if e.klen == longKey {
		x = uint64(*(*byte)(e.long))
	} else {
		x = uint64(e.kin[0])
	}
	b := e.Bytes()
	if len(b) > warmValueBytes {
		b = b[:warmValueBytes]
	}
	for i := 0; i < len(b); i += 64 {
		x += uint64(b[i])
	}
	return x
}
