package ipset

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzParseEntry: ParseEntry and ParseAddr never panic, and what they accept agrees with
// net/netip: an address parses there to the same address (::ffff: unmapped), a prefix is
// netip's prefix with its host bits cleared, a range's ends are netip addresses of one family in
// order; the canonical text parses back to the same entry.
//
//	go test ./ds/ipset -run '^$' -fuzz FuzzParseEntry -fuzztime 60s
func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{"1.2.3.4", "10.0.0.0/8", "1.2.3.4-1.2.3.9", "::1", "2001:db8::/32",
		"::ffff:1.2.3.4", "::ffff:1.2.3.0/120", "::ffff:0:0/80", "fe80::1%eth0", "1.2.3.04", "1.2.3.0/08",
		"1.2.3.9-1.2.3.4", "1.2.3.4-::1", "::/0", "0.0.0.0/0", "1.2.3.4/32", "255.255.255.255-255.255.255.255",
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "", "-", "/", "1.2.3.4/", "::/129", "1.2.3.4/-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := ParseEntry([]byte(s))
		if a, v6, aok := ParseAddr([]byte(s)); aok {
			na, err := netip.ParseAddr(s)
			if err != nil || na.Zone() != "" {
				t.Fatalf("ParseAddr(%q) accepted what netip refuses: %v", s, err)
			}
			if Addr(a, v6) != na.Unmap() {
				t.Fatalf("ParseAddr(%q) = %v, netip %v", s, Addr(a, v6), na.Unmap())
			}
			if !ok || r.Lo != a || r.Hi != a || r.V6 != v6 {
				t.Fatalf("ParseEntry(%q) = %v %v, want the address", s, r, ok)
			}
		} else if na, err := netip.ParseAddr(s); err == nil && na.Zone() == "" {
			t.Fatalf("ParseAddr(%q) refused netip's %v", s, na)
		}
		if !ok {
			return
		}
		if r.Hi.Less(r.Lo) {
			t.Fatalf("ParseEntry(%q): lo > hi", s)
		}
		if i := strings.IndexByte(s, '-'); i >= 0 {
			lo, e1 := netip.ParseAddr(s[:i])
			hi, e2 := netip.ParseAddr(s[i+1:])
			if e1 != nil || e2 != nil || lo.Unmap().Is4() != hi.Unmap().Is4() || hi.Unmap().Less(lo.Unmap()) {
				t.Fatalf("ParseEntry(%q) accepted a range netip refuses", s)
			}
			if Addr(r.Lo, r.V6) != lo.Unmap() || Addr(r.Hi, r.V6) != hi.Unmap() {
				t.Fatalf("ParseEntry(%q) = %v", s, r)
			}
		} else if strings.IndexByte(s, '/') >= 0 {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				t.Fatalf("ParseEntry(%q) accepted a prefix netip refuses: %v", s, err)
			}
			p = p.Masked()
			lo := p.Addr()
			n := p.Bits()
			if lo.Is4In6() && n >= 96 {
				lo, n = lo.Unmap(), n-96
			}
			if Addr(r.Lo, r.V6) != lo {
				t.Fatalf("ParseEntry(%q) start %v, netip %v", s, Addr(r.Lo, r.V6), lo)
			}
			if l, ok := r.Prefix(); !ok || l != n {
				t.Fatalf("ParseEntry(%q) length %d %v, netip %d", s, l, ok, n)
			}
		}
		back, ok := ParseEntry([]byte(r.String()))
		if !ok || back != r {
			t.Fatalf("ParseEntry(%q) = %v, whose text %q parses to %v %v", s, r, r.String(), back, ok)
		}
	})
}

// TestParseAllocatesNothing: parsing a valid entry or address allocates nothing.
func TestParseAllocatesNothing(t *testing.T) {
	in := [][]byte{[]byte("10.1.2.3"), []byte("2001:db8::/32"), []byte("1.2.3.4-1.2.3.9"), []byte("::ffff:1.2.3.4")}
	addrs := [][]byte{[]byte("10.1.2.3"), []byte("2001:db8::1"), []byte("::ffff:1.2.3.4")}
	if n := testing.AllocsPerRun(100, func() {
		for _, b := range in {
			ParseEntry(b)
		}
		for _, b := range addrs {
			ParseAddr(b)
		}
	}); n != 0 {
		t.Errorf("%v allocs per run", n)
	}
}
