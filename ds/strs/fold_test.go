package strs

import (
	"strings"
	"testing"
)

// The fold functions agree with strings.EqualFold and friends on ASCII, and leave every byte
// outside A-Z/a-z alone (strings.EqualFold would fold the Kelvin sign to k).
func TestFold(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	for _, c := range all {
		want := c
		if c < 0x80 {
			want = strings.ToLower(string(rune(c)))[0]
		}
		if Lower(c) != want {
			t.Errorf("Lower(%#x) = %#x, want %#x", c, Lower(c), want)
		}
		if c < 0x80 && Upper(c) != strings.ToUpper(string(rune(c)))[0] {
			t.Errorf("Upper(%#x) = %#x", c, Upper(c))
		}
	}
	f := func(b, s string, want bool) {
		t.Helper()
		if got := EqualFold([]byte(b), s); got != want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", b, s, got, want)
		}
	}
	f("GET", "get", true)
	f("gEt", "GeT", true)
	f("get", "gets", false)
	f("[", "{", false) // '[' | 0x20 == '{': folding must not be a bit trick
	f("@", "`", false)
	f("\xc4", "\xe4", false)
	f("", "", true)
	if !HasPrefixFold([]byte("INFinity"), "inf") || HasPrefixFold([]byte("in"), "inf") {
		t.Error("HasPrefixFold")
	}
	if got := string(AppendLower([]byte("x"), []byte("AbC-\xc4"))); got != "xabc-\xc4" {
		t.Errorf("AppendLower = %q", got)
	}
	if got := string(AppendUpper(nil, []byte("aBc-1"))); got != "ABC-1" {
		t.Errorf("AppendUpper = %q", got)
	}
}
