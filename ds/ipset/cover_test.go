package ipset

import "testing"

// Entries at the ends of each family's space: lookups at the first and last address, and the
// merged form and count of what covers them (the differential test's random entries never reach
// 255.255.255.255 or ffff:…:ffff).
func TestFamilyEnds(t *testing.T) {
	for _, c := range []struct {
		entries []string
		merged  string
		count   string
	}{
		{[]string{"0.0.0.0/0"}, "0.0.0.0/0", "4294967296"},
		{[]string{"255.255.255.255", "255.255.255.0/24"}, "255.255.255.0/24", "256"},
		{[]string{"255.255.255.254-255.255.255.255", "0.0.0.0"}, "0.0.0.0 255.255.255.254/31", "3"},
		{[]string{"::/0"}, "::/0", "340282366920938463463374607431768211456"},
		{[]string{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::"},
			":: ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127", "3"},
	} {
		s := New()
		for _, e := range c.entries {
			r, ok := ParseEntry([]byte(e))
			if !ok {
				t.Fatal(e)
			}
			s.Add(r, Meta{Label: []byte("x")}, false, false)
		}
		for _, e := range c.entries {
			r, _ := ParseEntry([]byte(e))
			for _, a := range []U128{r.Lo, r.Hi} {
				if !s.Contains(a, r.V6, 1) {
					t.Errorf("%v: %v not contained", c.entries, Addr(a, r.V6))
				}
			}
		}
		got := ""
		for i, r := range s.Merged(true, true, 1) {
			if i > 0 {
				got += " "
			}
			got += r.String()
		}
		if got != c.merged {
			t.Errorf("%v: merged %q, want %q", c.entries, got, c.merged)
		}
		if n := s.AddrCount(true, true, 1).String(); n != c.count {
			t.Errorf("%v: count %s, want %s", c.entries, n, c.count)
		}
	}
}
