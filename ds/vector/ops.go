package vector

import "slices"

// Add inserts name with vec (copying both) or, when name exists, replaces its vector and relinks it
// (attribute and id kept). ef 0 uses Config.EF; below M it is raised to M. On error nothing changes.
func (s *Set) Add(name []byte, vec []float32, ef int) (bool, error) {
	sc := getScratch(len(s.level) + 1)
	defer putScratch(sc)
	norm, err := s.prepare(vec, &sc.q)
	if err != nil {
		return false, err
	}
	if ef <= 0 {
		ef = s.cfg.EF
	}
	ef = max(ef, s.cfg.M) // as hnswlib: a beam narrower than M would starve the new node of links
	if id, ok := s.byName[string(name)]; ok {
		s.unlink(sc, id)
		s.count--
		if s.count == 0 {
			s.maxLevel = 0
		}
		s.place(sc, id, norm, ef)
		s.fixOrphans(sc)
		return false, nil
	}
	if len(s.free) == 0 && len(s.level) >= MaxNodes {
		return false, ErrFull
	}
	id := s.slot()
	key := string(name)
	s.byName[key] = id
	s.names[id] = key
	s.heap += len(key)
	s.place(sc, id, norm, ef)
	s.fixOrphans(sc)
	return true, nil
}

// place stores sc.q at id with a fresh level and links it.
func (s *Set) place(sc *scratch, id uint32, norm float32, ef int) {
	s.store(id, &sc.q, norm)
	L := s.nextLevel()
	s.level[id] = uint8(L)
	s.block(id, 0)[0] = 0
	s.heap -= 4 * cap(s.upper[id])
	if n := L * s.s1; n > 0 {
		s.upper[id] = grow(s.upper[id], n)
		clear(s.upper[id])
	} else {
		s.upper[id] = nil
	}
	s.heap += 4 * cap(s.upper[id])
	if len(sc.marks) < len(s.level) {
		sc.marks = make([]uint32, 2*len(s.level))
		sc.epoch = 0
	}
	s.insert(sc, id, &sc.q, L, ef)
	s.count++
}

// slot hands out a free id, or grows every per-id array by one.
func (s *Set) slot() uint32 {
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		s.free = s.free[:n-1]
		return id
	}
	id := uint32(len(s.level))
	s.level = append(s.level, freeLevel)
	s.names = append(s.names, "")
	s.attrs = append(s.attrs, nil)
	s.norm = append(s.norm, 1)
	s.upper = append(s.upper, nil)
	s.rev = append(s.rev, nil)
	s.links0 = extend(s.links0, s.s0)
	switch s.cfg.Quant {
	case NoQuant:
		s.f32 = extend(s.f32, s.cfg.Dim)
	case Q8:
		s.i8 = extend(s.i8, s.cfg.Dim)
		s.q8 = append(s.q8, q8meta{})
	default:
		s.bits = extend(s.bits, s.words)
	}
	return id
}

func extend[T any](a []T, n int) []T {
	a = slices.Grow(a, n)
	a = a[:len(a)+n]
	clear(a[len(a)-n:])
	return a
}

// Remove deletes name for real: its in-neighbours are relinked and its id is reused later.
func (s *Set) Remove(name []byte) bool {
	id, ok := s.byName[string(name)]
	if !ok {
		return false
	}
	sc := getScratch(len(s.level))
	defer putScratch(sc)
	s.unlink(sc, id)
	delete(s.byName, s.names[id])
	s.heap -= len(s.names[id]) + 4*(cap(s.upper[id])+cap(s.rev[id]))
	s.names[id] = ""
	s.setAttrID(id, nil)
	s.level[id] = freeLevel
	s.upper[id] = nil
	s.rev[id] = nil
	s.free = append(s.free, id)
	s.count--
	if s.count == 0 {
		s.maxLevel, s.entry = 0, 0
	}
	s.fixOrphans(sc)
	return true
}
