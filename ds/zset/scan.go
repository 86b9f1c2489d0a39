package zset

// Scan is one ZSCAN step from cursor: it calls fn with members and returns the next cursor (0
// when the walk is done). A packed set is returned whole with cursor 0, as Redis does. A large
// set walks its index's home slots in reverse-binary order, visiting slots until count members
// were returned or ten times count slots were visited, so a member present for the whole walk
// is returned at least once whatever inserts, deletes and resizes happen between calls.
func (z *ZSet) Scan(cursor uint64, count int, fn func(member []byte, score float64)) uint64 {
	if z.large() == nil {
		lpWalk(lpRecords(z.buf()), 0, false, func(m []byte, s float64) bool { fn(m, s); return true })
		return 0
	}
	b := z.large()
	emitted, budget := 0, count*10
	emit := func(id uint32) {
		it := b.item(id)
		fn(b.arena.get(it.ref), it.score)
		emitted++
	}
	for {
		cursor = b.scanBucket(cursor, emit)
		budget--
		if cursor == 0 || budget <= 0 || emitted >= count {
			return cursor
		}
	}
}
