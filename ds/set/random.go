package set

// Random choice and removal. Each function takes a seed from the caller and draws what it needs
// from it; members are chosen uniformly. Positions number the members for one call: an index for
// the compact encodings, see big.randomPos for the big one.

func (s *Set) randomPos(r *rng) uint64 {
	if s.enc == encBig {
		return s.big.randomPos(r)
	}
	return r.below(uint64(s.Len()))
}

// at returns the member at pos, formatting an integer into buf.
func (s *Set) at(pos uint64, buf []byte) []byte {
	switch s.enc {
	case encIntset:
		return formatInt(buf, s.is().at(int(pos)))
	case encListpack:
		return s.lp().at(int(pos))
	}
	return s.big.at(pos, buf)
}

// removeAt removes m, the member at pos.
func (s *Set) removeAt(pos uint64, m []byte) {
	if s.enc == encBig {
		s.big.removeAt(pos)
		return
	}
	s.Remove(m)
}

// Random returns a random member of the non-empty set; it is valid until the set changes or
// buf is reused.
func (s *Set) Random(seed uint64, buf []byte) []byte {
	r := rng{seed}
	return s.at(s.randomPos(&r), buf)
}

// Pop removes a random member of the non-empty set and returns it, copied into buf's storage.
func (s *Set) Pop(seed uint64, buf []byte) []byte {
	r := rng{seed}
	return s.pop(&r, buf)
}

func (s *Set) pop(r *rng, buf []byte) []byte {
	pos := s.randomPos(r)
	m := append(buf[:0], s.at(pos, buf)...)
	s.removeAt(pos, m)
	return m
}

// RandomRepeat calls fn with n members chosen independently (SRANDMEMBER's negative count),
// stopping early when fn returns false.
func (s *Set) RandomRepeat(n int, seed uint64, fn func(m []byte) bool) {
	r := rng{seed}
	var buf [20]byte
	for range n {
		if !fn(s.at(s.randomPos(&r), buf[:0])) {
			return
		}
	}
}

// RandomDistinct calls fn with n distinct members, 0 < n < Len, in random order. Like Redis,
// it shuffles a copy of the whole set when n is more than a third of it, and otherwise draws
// members until n distinct ones came up.
func (s *Set) RandomDistinct(n int, seed uint64, fn func(m []byte)) {
	r := rng{seed}
	if size := s.Len(); n*3 > size {
		s.shuffled(n, &r, fn)
		return
	}
	seen := make(map[uint64]struct{}, n)
	var buf [20]byte
	for len(seen) < n {
		pos := s.randomPos(&r)
		if _, dup := seen[pos]; !dup {
			seen[pos] = struct{}{}
			fn(s.at(pos, buf[:0]))
		}
	}
}

// shuffled copies every member, then emits the first n of a Fisher-Yates shuffle.
func (s *Set) shuffled(n int, r *rng, fn func(m []byte)) {
	var data []byte
	ends := make([]int, 0, s.Len())
	s.Each(func(m []byte) bool {
		data = append(data, m...)
		ends = append(ends, len(data))
		return true
	})
	member := func(i int) []byte {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		return data[start:ends[i]]
	}
	idx := make([]int, len(ends))
	for i := range idx {
		idx[i] = i
	}
	for i := range n {
		j := i + int(r.below(uint64(len(idx)-i)))
		idx[i], idx[j] = idx[j], idx[i]
		fn(member(idx[i]))
	}
}

// PopN removes n random members, 0 < n < Len, calling fn with each. Like Redis, when fewer than
// a fifth of n members would remain it instead moves the remaining ones to a new set (built as
// any new set is, so it may become an intset again) and emits the rest of the old one.
func (s *Set) PopN(n int, seed uint64, lim *Limits, fn func(m []byte)) {
	r := rng{seed}
	var buf [64]byte
	remaining := s.Len() - n
	if remaining*5 > n {
		for range n {
			fn(s.pop(&r, buf[:0]))
		}
		return
	}
	keep := New() // not a builder: its members come from s, which changes on the way
	for range remaining {
		pos := s.randomPos(&r)
		m := s.at(pos, buf[:0])
		keep.Add(m, lim)
		s.removeAt(pos, m)
	}
	s.Each(func(m []byte) bool { fn(m); return true })
	*s = *keep
}
