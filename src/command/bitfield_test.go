package command

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hotkv/hotkv/net/resp"
)

// bitModel is the dumb reference for a bitmap: one bool per bit, and the string's length in
// bytes (a write grows it to the byte holding its last bit).
type bitModel struct {
	bits []bool
}

func (m *bitModel) grow(lastBit int) {
	for len(m.bits) <= lastBit|7 {
		m.bits = append(m.bits, false)
	}
}

func (m *bitModel) get(i int) bool { return i < len(m.bits) && m.bits[i] }

func (m *bitModel) bytes() string {
	b := make([]byte, len(m.bits)/8)
	for i, v := range m.bits {
		if v {
			b[i/8] |= 0x80 >> (i % 8)
		}
	}
	return string(b)
}

// field reads width bits at off as an unsigned big integer.
func (m *bitModel) field(off, width int) *big.Int {
	v := new(big.Int)
	for i := range width {
		v.Lsh(v, 1)
		if m.get(off + i) {
			v.SetBit(v, 0, 1)
		}
	}
	return v
}

func (m *bitModel) setField(off, width int, v *big.Int) {
	m.grow(off + width - 1)
	mod := new(big.Int).Lsh(big.NewInt(1), uint(width))
	u := new(big.Int).Mod(v, mod)
	for i := range width {
		m.bits[off+i] = u.Bit(width-1-i) == 1
	}
}

// fieldOpRef is BITFIELD's arithmetic by exact integers: the range of the type, wrapping modulo
// 2^width, saturating at the ends, or failing. Redis's one quirk is kept: its signed check
// computes max-value in 64 bits, so a SET value below max-2^63 saturates to max.
func fieldOpRef(m *bitModel, signed bool, width, off int, set bool, arg int64, ow string) (reply string) {
	m.grow(off + width - 1) // the string grows before the operations run, even one that fails
	lo, hi := big.NewInt(0), new(big.Int).Lsh(big.NewInt(1), uint(width))
	hi.Sub(hi, big.NewInt(1))
	raw := m.field(off, width)
	old := new(big.Int).Set(raw)
	if signed {
		half := new(big.Int).Lsh(big.NewInt(1), uint(width-1))
		lo = new(big.Int).Neg(half)
		hi = new(big.Int).Sub(half, big.NewInt(1))
		if old.Cmp(hi) > 0 {
			old.Sub(old, new(big.Int).Lsh(big.NewInt(1), uint(width)))
		}
	}
	nv := new(big.Int).Add(old, big.NewInt(arg))
	switch {
	case set && !signed: // an unsigned field takes the value's 64 bits as unsigned: -1 is 2^64-1
		nv = new(big.Int).SetUint64(uint64(arg))
	case set:
		nv = big.NewInt(arg)
	}
	out := nv
	if nv.Cmp(lo) < 0 || nv.Cmp(hi) > 0 {
		quirk := set && signed && width < 64 && new(big.Int).Sub(hi, nv).Cmp(big.NewInt(1<<63-1)) > 0
		switch {
		case ow == "FAIL":
			return "_"
		case ow == "SAT" && (nv.Cmp(hi) > 0 || quirk):
			out = hi
		case ow == "SAT":
			out = lo
		default:
			mod := new(big.Int).Lsh(big.NewInt(1), uint(width))
			out = new(big.Int).Mod(nv, mod)
			if signed && out.Cmp(hi) > 0 {
				out.Sub(out, mod)
			}
		}
	}
	m.setField(off, width, out)
	if set {
		return old.String()
	}
	return out.String()
}

// FuzzBitfieldSetbit runs SETBIT, GETBIT, BITFIELD (GET, SET, INCRBY under each OVERFLOW, plain
// and "#" offsets), BITCOUNT and BITPOS decoded from the input against bitModel, reply by reply,
// and compares the string's bytes at the end. An operand byte with 0x20 set moves the offset
// past 600,000 bits: a key created there is sparse (bitmaps_sparse.go), one created near the
// start is dense, and later operations meet either form at both ends.
func FuzzBitfieldSetbit(f *testing.F) {
	f.Add([]byte("\x00\x27\x01\x02\x60\x00\x00\x00\x00\x00\x00\x00\x05\x00\x21\x00\x04\x20\x10\x05\x01\x00"))
	f.Add([]byte("\x02\x2f\xff\x81\x10\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00\x02\x00\x05\x00\x00"))
	f.Add([]byte("\x00\x07\x01\x02\x40\x00\x00\x00\x00\x00\x00\x00\x05"))
	f.Add([]byte("\x01\x3f\xff\x03\x81\x10\x00\x00\x00\x00\x00\x00\x80\x02\x00"))
	f.Add([]byte("\x03\x3f\x00\x02\x3f\x00\x05\x80\x00\x00\x00\x00\x00\x00\x00\x04\x01\x02\x03"))
	e := newTestEngine()
	f.Fuzz(func(t *testing.T, prog []byte) {
		tc := newTestConn(t, e)
		tc.do("DEL", "bm")
		m := &bitModel{}
		for len(prog) >= 3 {
			op, a, b := prog[0]%6, int(prog[1]), int(prog[2])
			prog = prog[3:]
			off := (a<<8 | b) % 4096
			if a&0x20 != 0 {
				off += 600000 // a multiple of 64: BITFIELD's "#" offsets below stay near the start
			}
			var args []string
			var want string
			switch op {
			case 0: // SETBIT
				v := a & 1
				args = []string{"SETBIT", "bm", strconv.Itoa(off), strconv.Itoa(v)}
				want = ":" + strconv.Itoa(boolInt01(m.get(off))) + "\r\n"
				m.grow(off)
				m.bits[off] = v == 1
			case 1: // GETBIT
				args = []string{"GETBIT", "bm", strconv.Itoa(off)}
				want = ":" + strconv.Itoa(boolInt01(m.get(off))) + "\r\n"
			case 2, 3: // BITFIELD GET|SET|INCRBY
				if len(prog) < 9 {
					return
				}
				signed := prog[0]&0x80 != 0
				width := int(prog[0]&0x3f) + 1
				if !signed && width == 64 {
					width = 63
				}
				arg := int64(binary.LittleEndian.Uint64(prog[1:9]))
				prog = prog[9:]
				if a&0x40 != 0 {
					arg >>= uint(b % 64) // small values too, not only huge ones
				}
				typ := fmt.Sprintf("u%d", width)
				if signed {
					typ = fmt.Sprintf("i%d", width)
				}
				ow := []string{"WRAP", "SAT", "FAIL"}[a%3]
				offArg := strconv.Itoa(off)
				if b&1 == 1 {
					off = (off % 64) * width
					offArg = "#" + strconv.Itoa(off/width)
				}
				sub := []string{"GET", "SET", "INCRBY"}[(int(op)+a/3)%3]
				args = []string{"BITFIELD", "bm", "OVERFLOW", ow, sub, typ, offArg}
				var r string
				if sub == "GET" {
					v := m.field(off, width)
					if signed && v.Bit(width-1) == 1 {
						v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(width)))
					}
					r = v.String()
				} else {
					args = append(args, strconv.FormatInt(arg, 10))
					r = fieldOpRef(m, signed, width, off, sub == "SET", arg, ow)
				}
				if r == "_" {
					want = "*1\r\n$-1\r\n"
				} else {
					want = "*1\r\n:" + r + "\r\n"
				}
			case 4: // BITCOUNT in bits
				end := off + b%200
				args = []string{"BITCOUNT", "bm", strconv.Itoa(off), strconv.Itoa(end), "BIT"}
				n := 0
				for i := off; i <= end && i < len(m.bits); i++ {
					if m.bits[i] {
						n++
					}
				}
				if len(m.bits) == 0 {
					n = 0
				}
				want = ":" + strconv.Itoa(n) + "\r\n"
			case 5: // BITPOS of the whole string
				bit := a & 1
				args = []string{"BITPOS", "bm", strconv.Itoa(bit)}
				pos := -1
				for i, v := range m.bits {
					if v == (bit == 1) {
						pos = i
						break
					}
				}
				if pos < 0 && bit == 0 { // a missing key is all clear bits too
					pos = len(m.bits) // the first clear bit past the string
				}
				want = ":" + strconv.Itoa(pos) + "\r\n"
			}
			if got := tc.do(args...); got != want {
				t.Fatalf("%s: got %q, want %q", strings.Join(args, " "), got, want)
			}
		}
		got := tc.do("GET", "bm")
		want := string(resp.AppendBulk(nil, []byte(m.bytes())))
		if len(m.bits) == 0 {
			want = "$-1\r\n"
		}
		if got != want {
			t.Fatalf("GET bm: %q, model %q", got, want)
		}
	})
}

func boolInt01(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBitsPastEntryLimit: with proto-max-bulk-len above an Entry's 4 GB (keyspace.MaxString),
// offsets are bounded by the Entry instead, so no command can ask for a longer string: SETBIT
// answers Redis's offset error, and a BITFIELD whose last field would end past it answers the
// string-size error without creating the key (Redis would allocate the 4 GB).
func TestBitsPastEntryLimit(t *testing.T) {
	e := newTestEngine()
	s := *e.Settings()
	s.ProtoMaxBulkLen = 1 << 40
	e.SetSettings(s)
	tc := newTestConn(t, e)
	const lastByte = 4294967294 // keyspace.MaxString-1
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"SETBIT", "k", strconv.Itoa((lastByte + 1) * 8), "1"}, "-" + ErrBitOffset + "\r\n"},
		{[]string{"GETBIT", "k", strconv.Itoa((lastByte + 1) * 8)}, "-" + ErrBitOffset + "\r\n"},
		{[]string{"BITFIELD", "k", "SET", "i64", strconv.Itoa(lastByte*8 + 1), "1"}, "-" + ErrStringMax + "\r\n"},
		{[]string{"EXISTS", "k"}, ":0\r\n"},
		{[]string{"GETBIT", "k", strconv.Itoa(lastByte * 8)}, ":0\r\n"},
	} {
		if got := tc.do(c.args...); got != c.want {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
}

// TestSharedBitReadsBesideWrites runs the shared bitmap reads on two connections while a third
// sets bits and appends: every reply is well formed and BITCOUNT never goes back (bits are only
// ever set), under -race no read writes shared state, and each read ran as shared work.
func TestSharedBitReadsBesideWrites(t *testing.T) {
	e := newTestEngine()
	w := newTestConn(t, e)
	w.do("SETBIT", "b", "0", "1")
	var reads []byte
	for _, args := range [][]string{{"GETBIT", "b", "0"}, {"BITCOUNT", "b"}, {"BITPOS", "b", "1"},
		{"BITFIELD_RO", "b", "GET", "u1", "0"}} {
		reads = append(reads, encodeCommand(args)...)
	}
	const rounds = 300
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newTestConn(t, e)
			last := 0
			for range rounds {
				out, err := r.send(reads)
				if err != nil {
					t.Error(err)
					return
				}
				var n int
				if _, err := fmt.Sscanf(string(out), ":1\r\n:%d\r\n:0\r\n*1\r\n:1\r\n", &n); err != nil || n < last {
					t.Errorf("replies %q after BITCOUNT %d", out, last)
					return
				}
				last = n
			}
		}()
	}
	for i := range rounds {
		w.do("SETBIT", "b", strconv.Itoa(1+i*3), "1")
		w.do("APPEND", "b", "\x00")
	}
	wg.Wait()
	for _, name := range []string{"getbit", "bitcount", "bitpos", "bitfield_ro"} {
		if calls, _, _ := e.readerCalls(lookup([]byte(name))); calls == 0 {
			t.Errorf("%s never ran as shared work", name)
		}
	}
}
