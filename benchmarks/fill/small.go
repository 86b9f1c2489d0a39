package main

import "strconv"

// The small-collection datasets: n keys key:N of members elements each, built one element per
// command the way applications build them (RPUSH k e, SADD k m, HSET k f v, ZADD k score m), not
// with variadic commands. The elements go out element-major: element 0 of every key, then element 1
// of every key, and so on, so every collection grows a little at a time among all the others, as
// a list, set or hash per user or session does. A connection of -conns takes keys part, part+parts,
// ...; which bytes an element has depends only on its key number, its position and the seed, so
// the data is the same however many connections load it.

// smallKind writes one element command: position e of a key, whose element number is i.
type smallKind struct {
	cmd   string
	write func(p *pipe, o options, key []byte, e int64, i uint64)
	want  func(e int64) int64 // the integer reply the command must get
}

var (
	smallList = smallKind{"RPUSH", func(p *pipe, o options, key []byte, _ int64, i uint64) {
		p.begin(3)
		p.argString("RPUSH")
		p.arg(key)
		p.element(i, o)
	}, func(e int64) int64 { return e + 1 }} // the new length: the list was empty before
	smallSet = smallKind{"SADD", func(p *pipe, o options, key []byte, _ int64, i uint64) {
		p.begin(3)
		p.argString("SADD")
		p.arg(key)
		p.element(i, o)
	}, one}
	// A hash's fields are short (f:0, f:1, ...) and its values size bytes: what the element size
	// measures is the value an application stores.
	smallHash = smallKind{"HSET", func(p *pipe, o options, key []byte, e int64, i uint64) {
		p.begin(4)
		p.argString("HSET")
		p.arg(key)
		p.argNamed("f:", e)
		p.element(i, o)
	}, one}
	smallZset = smallKind{"ZADD", func(p *pipe, o options, key []byte, _ int64, i uint64) {
		p.begin(4)
		p.argString("ZADD")
		p.arg(key)
		p.score = strconv.AppendFloat(p.score[:0], unitFloat(i, o.seed), 'g', -1, 64)
		p.arg(p.score)
		p.element(i, o)
	}, one}
)

// one is the reply of a command that adds its one new member.
func one(int64) int64 { return 1 }

// smallLoader loads a small-collection dataset of kind: o.members rounds over this connection's keys.
func smallLoader(kind smallKind) func(p *pipe, o options) error {
	return func(p *pipe, o options) error {
		parts := max(o.parts, 1)
		var key []byte
		for e := range o.members {
			want := kind.want(e)
			for k := int64(o.part); k < o.n; k += int64(parts) {
				key = strconv.AppendInt(append(append(key[:0], o.key...), ':'), k, 10)
				kind.write(p, o, key, e, uint64(k)*uint64(o.members)+uint64(e))
				if err := p.end(kind.cmd, want, 1); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// element adds element number i: size random alphanumeric bytes. From 16 bytes on, the first 16
// are distinct for every i (appendUniqueWord), so a set's or sorted set's members never collide
// and every SADD and ZADD must add one; shorter elements are merely random.
func (p *pipe) element(i uint64, o options) {
	p.scratch = p.scratch[:0]
	if o.size >= 16 {
		p.scratch = appendUniqueWord(p.scratch, i, o.seed)
		p.scratch = appendWord(p.scratch, i, o.seed+1, o.size-16)
	} else {
		p.scratch = appendWord(p.scratch, i, o.seed, o.size)
	}
	p.arg(p.scratch)
}
