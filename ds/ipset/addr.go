// Package ipset is an IP set: IPv4 and IPv6 entries (an address, a CIDR prefix or a lo-hi
// range) with an optional label, a NOMATCH flag and an expiry each, answering "which entry
// decides this address" (the most specific cover: fewest addresses, tie: greater start).
//
// It knows nothing of RESP or commands and has no locks: it is changed only by the holder of
// its shard's token. Lookups (Lookup, Contains) change nothing, so any number of them may run at
// once while nobody changes the set (the shared reads of src/command/shared.go).
package ipset

import (
	"math/bits"
	"net/netip"
	"strings"
	"unsafe"
)

// U128 is an address as a 128-bit unsigned integer; an IPv4 address is its 32 bits in Lo.
type U128 struct{ Hi, Lo uint64 }

// Cmp compares a and b.
func (a U128) Cmp(b U128) int {
	switch {
	case a.Hi < b.Hi:
		return -1
	case a.Hi > b.Hi:
		return 1
	case a.Lo < b.Lo:
		return -1
	case a.Lo > b.Lo:
		return 1
	}
	return 0
}

// Less reports a < b.
func (a U128) Less(b U128) bool { return a.Hi < b.Hi || a.Hi == b.Hi && a.Lo < b.Lo }

// Sub is a-b (mod 2^128).
func (a U128) Sub(b U128) U128 {
	lo, borrow := bits.Sub64(a.Lo, b.Lo, 0)
	hi, _ := bits.Sub64(a.Hi, b.Hi, borrow)
	return U128{hi, lo}
}

// Add1 is a+1 and whether it overflowed.
func (a U128) Add1() (U128, bool) {
	lo, c := bits.Add64(a.Lo, 1, 0)
	hi, c2 := bits.Add64(a.Hi, 0, c)
	return U128{hi, lo}, c2 != 0
}

// mask returns a with all but its top n bits (of width w, 32 or 128) cleared, and the
// host mask of those bits.
func mask(a U128, n, w int) (U128, U128) {
	hm := hostMask(n, w)
	return U128{a.Hi &^ hm.Hi, a.Lo &^ hm.Lo}, hm
}

// hostMask is the mask of the low w-n bits.
func hostMask(n, w int) U128 {
	h := w - n // host bits
	switch {
	case h <= 0:
		return U128{}
	case h >= 128:
		return U128{^uint64(0), ^uint64(0)}
	case h >= 64:
		return U128{^uint64(0) >> (128 - h), ^uint64(0)}
	}
	return U128{0, ^uint64(0) >> (64 - h)}
}

// Range is an entry: the addresses lo..hi inclusive of one family.
type Range struct {
	Lo, Hi U128
	V6     bool
}

func width(v6 bool) int {
	if v6 {
		return 128
	}
	return 32
}

// Prefix reports whether r is one CIDR prefix, and its length.
func (r Range) Prefix() (int, bool) {
	w := width(r.V6)
	span := r.Hi.Sub(r.Lo)
	// span must be 2^k - 1 and lo aligned to 2^k.
	var k int
	switch {
	case span.Hi == ^uint64(0) && span.Lo == ^uint64(0):
		k = 128
	case span.Hi != 0:
		if span.Lo != ^uint64(0) || span.Hi&(span.Hi+1) != 0 {
			return 0, false
		}
		k = 64 + bits.Len64(span.Hi)
	default:
		if span.Lo&(span.Lo+1) != 0 {
			return 0, false
		}
		k = bits.Len64(span.Lo)
	}
	if k > w {
		return 0, false
	}
	if lo, _ := mask(r.Lo, w-k, w); lo != r.Lo {
		return 0, false
	}
	return w - k, true
}

// str views b as a string without copying; the string must not outlive b.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// parseAddr parses an address without a zone; mapped says it was ::ffff:a.b.c.d.
func parseAddr(s string) (a U128, v6, mapped, ok bool) {
	if s == "" || strings.IndexByte(s, '%') >= 0 {
		return a, false, false, false
	}
	ad, err := netip.ParseAddr(s)
	if err != nil {
		return a, false, false, false
	}
	if ad.Is4() {
		b := ad.As4()
		return U128{0, uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])}, false, false, true
	}
	b := ad.As16()
	a = U128{beUint64(b[:8]), beUint64(b[8:])}
	if ad.Is4In6() {
		return U128{0, a.Lo & 0xffffffff}, false, true, true
	}
	return a, true, false, true
}

func beUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// ParseAddr parses a lookup address (IPv4, IPv6, ::ffff: mapped to IPv4); no zone, no prefix.
// It allocates nothing for a valid address.
func ParseAddr(b []byte) (a U128, v6 bool, ok bool) {
	a, v6, _, ok = parseAddr(str(b))
	return
}

// ParseEntry parses an entry: an address, addr/len (host bits cleared) or lo-hi. ::ffff:
// addresses are IPv4 (a mapped prefix of length 96 or more is the IPv4 prefix of length-96; a
// shorter one stays IPv6, host bits cleared). Zones, leading zeros, mixed families, lo > hi and
// bad lengths are refused. It allocates nothing for a valid entry.
func ParseEntry(b []byte) (r Range, ok bool) {
	s := str(b)
	if i := strings.IndexByte(s, '-'); i >= 0 {
		lo, v6a, _, ok1 := parseAddr(s[:i])
		hi, v6b, _, ok2 := parseAddr(s[i+1:])
		if !ok1 || !ok2 || v6a != v6b || hi.Less(lo) {
			return r, false
		}
		return Range{lo, hi, v6a}, true
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		a, v6, mapped, ok := parseAddr(s[:i])
		if !ok {
			return r, false
		}
		n, ok := parseBits(s[i+1:])
		if !ok {
			return r, false
		}
		switch {
		case mapped && n >= 96:
			n -= 96
		case mapped: // a short prefix of a mapped address: IPv6
			a, v6 = U128{0, 0xffff<<32 | a.Lo}, true
		}
		w := width(v6)
		if n > w {
			return r, false
		}
		lo, hm := mask(a, n, w)
		return Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, v6}, true
	}
	a, v6, _, ok := parseAddr(s)
	if !ok {
		return r, false
	}
	return Range{a, a, v6}, true
}

// parseBits parses a prefix length: decimal, no sign, no leading zero, at most 128.
func parseBits(s string) (int, bool) {
	if s == "" || len(s) > 3 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 128
}

// Addr is a as a netip.Addr of its family.
func Addr(a U128, v6 bool) netip.Addr {
	if !v6 {
		x := uint32(a.Lo)
		return netip.AddrFrom4([4]byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)})
	}
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(a.Hi >> (56 - 8*i))
		b[8+i] = byte(a.Lo >> (56 - 8*i))
	}
	return netip.AddrFrom16(b)
}

// AppendRange appends r's canonical form: the address of a single address, addr/len of a
// prefix, lo-hi otherwise.
func AppendRange(dst []byte, r Range) []byte {
	dst = Addr(r.Lo, r.V6).AppendTo(dst)
	if r.Lo == r.Hi {
		return dst
	}
	if n, ok := r.Prefix(); ok {
		dst = append(dst, '/')
		if n >= 100 {
			dst = append(dst, byte('0'+n/100))
		}
		if n >= 10 {
			dst = append(dst, byte('0'+n/10%10))
		}
		return append(dst, byte('0'+n%10))
	}
	dst = append(dst, '-')
	return Addr(r.Hi, r.V6).AppendTo(dst)
}

// String is AppendRange's form.
func (r Range) String() string { return string(AppendRange(nil, r)) }
