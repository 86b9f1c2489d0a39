package budget

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// ref is a dumb model of a budget: its level is an exact rational, refilled by elapsed*limit/period
// and capped, with reservations in a map; what a take can get is the level's floor.
type ref struct {
	limit, period, cap int64
	level              *big.Rat
	at                 int64
	resv               map[uint64][2]int64 // id → n, deadline
}

func (r *ref) advance(now int64) {
	if now > r.at {
		add := new(big.Rat).SetFrac(big.NewInt((now-r.at)*r.limit), big.NewInt(r.period))
		r.level.Add(r.level, add)
		r.clamp()
		r.at = now
	}
	for id, v := range r.resv {
		if v[1] <= now {
			r.level.Add(r.level, big.NewRat(v[0], 1))
			r.clamp()
			delete(r.resv, id)
		}
	}
}

func (r *ref) clamp() {
	if c := big.NewRat(r.cap, 1); r.level.Cmp(c) > 0 {
		r.level = c
	}
}

func (r *ref) avail() int64 {
	f := new(big.Int).Quo(r.level.Num(), r.level.Denom()) // truncates toward zero
	if r.level.Sign() < 0 && !r.level.IsInt() {
		f.Sub(f, big.NewInt(1))
	}
	return f.Int64()
}

// wait is the least t (ns) with floor(level + t*limit/period) >= n.
func (r *ref) wait(n int64) int64 {
	if n <= r.avail() {
		return 0
	}
	if n > r.cap {
		return -1
	}
	need := new(big.Rat).Sub(big.NewRat(n, 1), r.level)
	need.Mul(need, big.NewRat(r.period, r.limit))
	q := new(big.Int).Quo(need.Num(), need.Denom())
	if !need.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

func TestBudgetAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := 0; trial < 300; trial++ {
		limit := 1 + rng.Int64N(1000)
		period := 1 + rng.Int64N(5e9)
		burst := rng.Int64N(100)
		now := int64(1e18)
		b := New(limit, period, burst, Tokens, now)
		r := &ref{limit: limit, period: period, cap: limit + burst, level: big.NewRat(limit+burst, 1), at: now,
			resv: map[uint64][2]int64{}}
		var nextID uint64
		for step := 0; step < 200; step++ {
			now += rng.Int64N(period/4 + 1)
			b.Advance(now)
			r.advance(now)
			n := rng.Int64N(limit/3 + 2)
			switch rng.IntN(5) {
			case 0, 1:
				if b.Available() >= n {
					b.Take(n)
					r.level.Sub(r.level, big.NewRat(n, 1))
				}
			case 2:
				if b.Available() >= n {
					nextID++
					dl := now + rng.Int64N(period)
					b.Reserve(nextID, n, dl)
					r.level.Sub(r.level, big.NewRat(n, 1))
					r.resv[nextID] = [2]int64{n, dl}
				}
			case 3:
				for id, v := range r.resv {
					actual := rng.Int64N(2*v[0] + 1)
					if !b.Settle(id, actual) {
						t.Fatalf("trial %d step %d: Settle(%d) found nothing", trial, step, id)
					}
					r.level.Add(r.level, big.NewRat(v[0]-actual, 1))
					r.clamp()
					delete(r.resv, id)
					break
				}
			case 4:
				for id, v := range r.resv {
					if !b.Release(id) {
						t.Fatalf("trial %d step %d: Release(%d) found nothing", trial, step, id)
					}
					r.level.Add(r.level, big.NewRat(v[0], 1))
					r.clamp()
					delete(r.resv, id)
					break
				}
			}
			if b.Available() != r.avail() {
				t.Fatalf("trial %d step %d: available %d, reference %d (%s)", trial, step, b.Available(), r.avail(), r.level)
			}
			if got, want := b.RetryAfter(n+limit/2), r.wait(n+limit/2); got != want {
				t.Fatalf("trial %d step %d: RetryAfter(%d) = %d, reference %d", trial, step, n+limit/2, got, want)
			}
			if len(b.Reservations()) != len(r.resv) {
				t.Fatalf("trial %d step %d: %d reservations, reference %d", trial, step, len(b.Reservations()), len(r.resv))
			}
			if step%50 == 0 {
				c, err := Decode(b.AppendBinary(nil))
				if err != nil || string(c.AppendBinary(nil)) != string(b.AppendBinary(nil)) {
					t.Fatalf("trial %d step %d: encoding round trip: %v", trial, step, err)
				}
			}
		}
	}
}

// Every truncation of a valid payload and random bytes are rejected or decode, never panic.
func TestDecodeBounded(t *testing.T) {
	b := New(100, 6e10, 5, MicroUSD, 1e18)
	b.Reserve(7, 10, 2e18)
	b.Reserve(9, 3, 2e18)
	p := b.AppendBinary(nil)
	for i := 0; i < len(p); i++ {
		if _, err := Decode(p[:i]); err == nil {
			t.Fatalf("truncated payload (%d of %d bytes) decoded", i, len(p))
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 10000; i++ {
		q := append([]byte(nil), p...)
		q[rng.IntN(len(q))] ^= byte(1 + rng.IntN(255))
		Decode(q)
	}
}

func FuzzDecode(f *testing.F) {
	b := New(100, 6e10, 5, Tokens, 1e18)
	b.Reserve(1, 10, 2e18)
	f.Add(b.AppendBinary(nil))
	f.Fuzz(func(t *testing.T, p []byte) {
		b, err := Decode(p)
		if err != nil {
			return
		}
		if q := b.AppendBinary(nil); string(q) != string(p) {
			t.Fatalf("decoded %x re-encodes as %x", p, q)
		}
		b.Advance(b.at + 1e9)
	})
}
