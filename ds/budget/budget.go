// Package budget is a token budget: a bucket of units (tokens, requests or micro-dollars) that
// refills continuously at Limit per Period up to Limit+Burst, with reservations that count at
// once and are settled (charged or refunded) or expire. Pure data: no RESP, no locks, no clock
// (every operation takes now, unix ns). Arithmetic is exact integers: the refill keeps the
// remainder of elapsed*Limit/Period, so no unit is lost or made up over any sequence of calls.
package budget

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
)

// Unit is what a budget counts.
type Unit uint8

const (
	Tokens Unit = iota
	Requests
	MicroUSD
)

var unitNames = [...]string{"tokens", "requests", "micro_usd"}

func (u Unit) String() string {
	if int(u) < len(unitNames) {
		return unitNames[u]
	}
	return "unknown"
}

// ParseUnit reads a unit name (lower case).
func ParseUnit(s string) (Unit, bool) {
	for i, n := range unitNames {
		if n == s {
			return Unit(i), true
		}
	}
	return 0, false
}

// Resv is a pending reservation: N units taken at once, refunded at Deadline unless settled.
type Resv struct {
	ID       uint64
	N        int64
	Deadline int64
}

// Budget is one key's state.
type Budget struct {
	Limit  int64 // units per Period, > 0
	Period int64 // ns, > 0
	Burst  int64 // units above Limit the bucket holds, >= 0
	Unit   Unit

	avail int64  // may be negative: a settlement charged more than was reserved
	frac  uint64 // refill remainder, elapsed*Limit mod Period, < Period
	at    int64  // time of the last advance
	resv  []Resv // pending, ascending ID
}

// New returns a full budget.
func New(limit, period, burst int64, unit Unit, now int64) *Budget {
	b := &Budget{Limit: limit, Period: period, Burst: burst, Unit: unit, at: now}
	b.avail = b.Capacity()
	return b
}

// Capacity is Limit+Burst (saturating).
func (b *Budget) Capacity() int64 {
	if b.Limit > math.MaxInt64-b.Burst {
		return math.MaxInt64
	}
	return b.Limit + b.Burst
}

// Reconfigure changes the rate and size, keeping what is available (at most the new capacity).
func (b *Budget) Reconfigure(limit, period, burst int64, unit Unit, now int64) {
	b.Advance(now)
	b.Limit, b.Period, b.Burst, b.Unit = limit, period, burst, unit
	b.frac = 0
	b.avail = min(b.avail, b.Capacity())
}

// Advance refills the bucket up to now and releases the reservations whose deadline is not
// after now, refunding them. It returns how many expired.
func (b *Budget) Advance(now int64) (expired int) {
	if now > b.at {
		c := b.Capacity()
		if b.avail >= c {
			b.frac = 0
		} else {
			hi, lo := bits.Mul64(uint64(now-b.at), uint64(b.Limit))
			lo, carry := bits.Add64(lo, b.frac, 0)
			hi += carry
			p := uint64(b.Period)
			if hi >= p {
				b.avail, b.frac = c, 0
			} else {
				q, r := bits.Div64(hi, lo, p)
				if q >= uint64(c-b.avail) || q > math.MaxInt64 {
					b.avail, b.frac = c, 0
				} else {
					b.avail += int64(q)
					b.frac = r
				}
			}
		}
		b.at = now
	}
	n := 0
	for _, r := range b.resv {
		if r.Deadline <= now {
			expired++
			b.refund(r.N)
			continue
		}
		b.resv[n] = r
		n++
	}
	clear(b.resv[n:])
	b.resv = b.resv[:n]
	return expired
}

func (b *Budget) refund(n int64) {
	if n > 0 {
		if c := b.Capacity(); satAdd(b.avail, n) >= c {
			b.avail, b.frac = c, 0 // full: no fraction above the capacity
		} else {
			b.avail += n
		}
	}
}

func satAdd(a, d int64) int64 {
	s := a + d
	if d > 0 && s < a {
		return math.MaxInt64
	}
	if d < 0 && s > a {
		return math.MinInt64
	}
	return s
}

// Peek returns what Advance(now) would leave available and reserved, without changing b.
func (b *Budget) Peek(now int64) (avail, reserved int64, pending int) {
	c := *b
	c.resv = nil
	c.Advance(now)
	for _, r := range b.resv {
		if r.Deadline <= now {
			c.refund(r.N)
		} else {
			reserved = satAdd(reserved, r.N)
			pending++
		}
	}
	return c.avail, reserved, pending
}

// Available is what a take could get now (after Advance).
func (b *Budget) Available() int64 { return b.avail }

// Reserved sums the pending reservations.
func (b *Budget) Reserved() (n int64) {
	for _, r := range b.resv {
		n = satAdd(n, r.N)
	}
	return n
}

// Reservations returns the pending reservations (read only).
func (b *Budget) Reservations() []Resv { return b.resv }

// Take removes n units; the caller has checked Available() >= n after Advance.
func (b *Budget) Take(n int64) { b.avail = satAdd(b.avail, -n) }

// Reserve takes n units at once under id until deadline.
func (b *Budget) Reserve(id uint64, n, deadline int64) {
	b.Take(n)
	i, _ := slices.BinarySearchFunc(b.resv, id, func(r Resv, id uint64) int {
		switch {
		case r.ID < id:
			return -1
		case r.ID > id:
			return 1
		}
		return 0
	})
	b.resv = slices.Insert(b.resv, i, Resv{ID: id, N: n, Deadline: deadline})
}

func (b *Budget) find(id uint64) int {
	for i := range b.resv {
		if b.resv[i].ID == id {
			return i
		}
	}
	return -1
}

// Settle ends reservation id with actual units used: the difference from what was reserved is
// refunded (actual less) or charged (actual more, possibly leaving the bucket in debt). It
// reports whether the reservation was pending.
func (b *Budget) Settle(id uint64, actual int64) bool {
	i := b.find(id)
	if i < 0 {
		return false
	}
	n := b.resv[i].N
	b.resv = slices.Delete(b.resv, i, i+1)
	if d := n - actual; d > 0 {
		b.refund(d)
	} else {
		b.avail = satAdd(b.avail, d)
	}
	return true
}

// Release ends reservation id unused, refunding it whole.
func (b *Budget) Release(id uint64) bool {
	i := b.find(id)
	if i < 0 {
		return false
	}
	n := b.resv[i].N
	b.resv = slices.Delete(b.resv, i, i+1)
	b.refund(n)
	return true
}

// RetryAfter is how long (ns) until n units are available at the refill rate, 0 if they are,
// -1 if never (n above the capacity). Pending reservations' refunds are not counted on.
func (b *Budget) RetryAfter(n int64) int64 {
	if n <= b.avail {
		return 0
	}
	if n > b.Capacity() {
		return -1
	}
	missing := uint64(n - b.avail) // units, > 0
	// ceil((missing*Period - frac) / Limit)
	hi, lo := bits.Mul64(missing, uint64(b.Period))
	lo, borrow := bits.Sub64(lo, b.frac, 0)
	hi -= borrow
	l := uint64(b.Limit)
	if hi >= l {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, l)
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Copy returns a deep copy.
func (b *Budget) Copy() *Budget {
	c := *b
	c.resv = slices.Clone(b.resv)
	return &c
}

// Clone is Copy for COPY (keyspace.Cloner).
func (b *Budget) Clone() any { return b.Copy() }

// Encoding is OBJECT ENCODING's answer, Redis's for a module value.
func (b *Budget) Encoding() string { return "raw" }

// MemoryBytes estimates the value's bytes.
func (b *Budget) MemoryBytes() int64 { return 96 + int64(cap(b.resv))*24 }

// Encoding: version byte 1, then uvarints/varints: limit, period, burst, unit, avail (varint),
// frac, at (varint), reservation count, each id, n (varint), deadline (varint).
const format = 1

// AppendBinary appends b's encoding (deterministic: one encoding per state).
func (b *Budget) AppendBinary(dst []byte) []byte {
	dst = append(dst, format)
	dst = binary.AppendUvarint(dst, uint64(b.Limit))
	dst = binary.AppendUvarint(dst, uint64(b.Period))
	dst = binary.AppendUvarint(dst, uint64(b.Burst))
	dst = append(dst, byte(b.Unit))
	dst = binary.AppendVarint(dst, b.avail)
	dst = binary.AppendUvarint(dst, b.frac)
	dst = binary.AppendVarint(dst, b.at)
	dst = binary.AppendUvarint(dst, uint64(len(b.resv)))
	for _, r := range b.resv {
		dst = binary.AppendUvarint(dst, r.ID)
		dst = binary.AppendVarint(dst, r.N)
		dst = binary.AppendVarint(dst, r.Deadline)
	}
	return dst
}

// ErrCorrupt is a payload that does not decode to a valid budget.
var ErrCorrupt = errors.New("corrupt budget payload")

// Decode reads an AppendBinary encoding, validating it; allocation is bounded by the payload's
// length, never by a count it declares.
func Decode(p []byte) (*Budget, error) {
	if len(p) < 1 || p[0] != format {
		return nil, ErrCorrupt
	}
	orig := p
	p = p[1:]
	var bad bool
	uv := func() uint64 {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			bad = true
			return 0
		}
		p = p[n:]
		return v
	}
	sv := func() int64 {
		v, n := binary.Varint(p)
		if n <= 0 {
			bad = true
			return 0
		}
		p = p[n:]
		return v
	}
	b := &Budget{}
	b.Limit, b.Period, b.Burst = int64(uv()), int64(uv()), int64(uv())
	if len(p) < 1 {
		return nil, ErrCorrupt
	}
	b.Unit = Unit(p[0])
	p = p[1:]
	b.avail, b.frac, b.at = sv(), uv(), sv()
	n := uv()
	if bad || b.Limit <= 0 || b.Period <= 0 || b.Burst < 0 || int(b.Unit) >= len(unitNames) ||
		b.frac >= uint64(b.Period) || b.avail > b.Capacity() || n > uint64(len(p)/3) {
		return nil, ErrCorrupt
	}
	if n > 0 {
		b.resv = make([]Resv, 0, n)
	}
	var last uint64
	for i := uint64(0); i < n; i++ {
		r := Resv{ID: uv(), N: sv(), Deadline: sv()}
		if bad || r.N < 0 || (i > 0 && r.ID <= last) {
			return nil, ErrCorrupt
		}
		last = r.ID
		b.resv = append(b.resv, r)
	}
	if len(p) != 0 {
		return nil, ErrCorrupt
	}
	// Only the canonical encoding (shortest varints): one payload per state.
	if enc := b.AppendBinary(make([]byte, 0, len(orig))); string(enc) != string(orig) {
		return nil, ErrCorrupt
	}
	return b, nil
}
