package set

// builder builds a set in one go, member by member, as a command's result (SUNION, SDIFF,
// SINTERSTORE): the encodings and conversions are Add's, so the same members give the same
// set, but long members are borrowed from the sets they come from instead of copied; done fits
// the buffer and copies them. A result that outgrows the listpack so leaves no member copies
// behind it.
// The members added must stay valid and unchanged until done: the source sets must not change.
type builder struct {
	s   *Set
	lim *Limits
}

func newBuilder(lim *Limits) *builder { return &builder{s: New(), lim: lim} }

// add adds m unless it is a member already.
func (bd *builder) add(m []byte) { bd.s.add(m, bd.lim, true) }

// addInt is add for an integer member.
func (bd *builder) addInt(v int64) {
	if bd.s.enc == encIntset {
		bd.s.addInt(v, bd.lim)
		return
	}
	var buf [20]byte
	bd.s.add(formatInt(buf[:], v), bd.lim, false)
}

// done returns the set, settled as Add would have left it.
func (bd *builder) done() *Set {
	s := bd.s
	switch s.enc {
	case encIntset:
		s.b = fit(s.b)
	case encListpack:
		s.lp().own()
	}
	return s
}
