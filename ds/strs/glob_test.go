package strs

import (
	"bufio"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

func TestGlobCases(t *testing.T) {
	f := func(pattern, s string, nocase, want bool) {
		t.Helper()
		if got := Glob([]byte(pattern), []byte(s), nocase); got != want {
			t.Errorf("Glob(%q, %q, %v) = %v, want %v", pattern, s, nocase, got, want)
		}
	}
	f("", "", false, true)
	f("*", "", false, false) // Redis: an empty string only matches ""
	f("**", "", false, false)
	f("", "a", false, false)
	f("*", "anything", false, true)
	f("a*", "a", false, true)
	f("a*", "abc", false, true)
	f("*a", "a", false, true)
	f("*c", "abc", false, true)
	f("*c", "abd", false, false)
	f("a*b*c", "aXbYc", false, true)
	f("a*b*c", "aXcYb", false, false)
	f("h?llo", "hello", false, true)
	f("h?llo", "hllo", false, false)
	f("h[ae]llo", "hallo", false, true)
	f("h[ae]llo", "hillo", false, false)
	f("h[^e]llo", "hallo", false, true)
	f("h[^e]llo", "hello", false, false)
	f("h[a-b]llo", "hbllo", false, true)
	f("h[b-a]llo", "hallo", false, true) // reversed ranges are swapped
	f("h[a-b]llo", "hcllo", false, false)
	f(`h\*llo`, "h*llo", false, true)
	f(`h\*llo`, "hello", false, false)
	f(`ab\`, `ab\`, false, true)   // a trailing backslash is literal
	f("a[", "ab", false, false)    // empty unterminated class never matches
	f("a[^", "ab", false, true)    // its negation always does
	f("a[b", "ab", false, true)    // unterminated class runs to the end
	f("[a-]b", "ab", false, false) // "a-]" is a range, the class goes on
	f(`[\]]`, "]", false, true)
	f(`[\a]`, "a", false, true)
	f("HELLO", "hello", true, true)
	f("HELLO", "hello", false, false)
	f("[A-Z]", "q", true, true)
	f(`[\A]`, "a", true, false) // escaped class bytes compare exactly
	f("*Port*", "report", true, true)
	f("a\xffb", "a\xffb", false, true)
	f("[a-\xff]", "b", false, false) // signed char: \xff is -1, range is [-1, 'a']
	f("[\x80-\xff]", "\x90", false, true)
}

// TestGlobPathological checks that star-heavy patterns against long
// strings finish quickly, where naive recursion takes exponential time.
func TestGlobPathological(t *testing.T) {
	s := []byte(strings.Repeat("a", 10000))
	start := time.Now()
	for _, p := range []string{
		"a*a*a*a*a*a*a*a*b",
		strings.Repeat("*a", 500) + "b",
		strings.Repeat("a*", 50) + "[b]",
		"*?*?*?*?*?*?*?*?*?*?b",
	} {
		if Glob([]byte(p), s, false) {
			t.Errorf("%.30q... matched a string without b", p)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("pathological patterns took %v", d)
	}
}

// TestGlobStarLimit checks Redis's limit on stars: a match that has to get
// past the 1001st star fails, one that ends at a trailing star succeeds.
func TestGlobStarLimit(t *testing.T) {
	s := []byte(strings.Repeat("a", 2000))
	if !Glob([]byte(strings.Repeat("a*", 1000)), s, false) {
		t.Error("1000 stars, trailing: want match")
	}
	if !Glob([]byte(strings.Repeat("*a", 999)+"*"), s, false) {
		t.Error("1000 stars, last trailing: want match")
	}
	if Glob([]byte(strings.Repeat("*a", 1001)), s, false) {
		t.Error("1001 stars: want no match")
	}
}

// refMatch is a direct recursive rendering of Redis's stringmatchlen, used
// as the reference the iterative Glob must agree with.
func refMatch(p, s []byte, nocase bool) bool {
	skip := false
	return refImpl(p, s, nocase, &skip, 0)
}

func refImpl(p, s []byte, nocase bool, skip *bool, nesting int) bool {
	if nesting > maxGlobStars {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if refImpl(p[1:], s, nocase, skip, nesting+1) {
					return true
				}
				if *skip {
					return false
				}
				s = s[1:]
			}
			*skip = true
			return false
		case '?':
			s = s[1:]
		case '[':
			rest, ok := refClass(p, s[0], nocase)
			if !ok {
				return false
			}
			p = rest
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			if refLower(int(int8(p[0])), nocase) != refLower(int(int8(s[0])), nocase) {
				return false
			}
			s = s[1:]
		default:
			if refLower(int(int8(p[0])), nocase) != refLower(int(int8(s[0])), nocase) {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// refClass matches c against the class opening full[0] and returns the
// pattern from the class's last byte on.
func refClass(full []byte, c byte, nocase bool) ([]byte, bool) {
	p := full[1:]
	at := func(i int) byte {
		if i < len(p) {
			return p[i]
		}
		return 0
	}
	i := 0
	not := at(0) == '^'
	if not {
		i++
	}
	match := false
	for {
		rem := len(p) - i
		if at(i) == '\\' && rem >= 2 {
			i++
			if p[i] == c {
				match = true
			}
		} else if at(i) == ']' {
			break
		} else if rem == 0 {
			i--
			break
		} else if rem >= 3 && p[i+1] == '-' {
			lo, hi, x := int(int8(p[i])), int(int8(p[i+2])), int(int8(c))
			if lo > hi {
				lo, hi = hi, lo
			}
			lo, hi, x = refLower(lo, nocase), refLower(hi, nocase), refLower(x, nocase)
			i += 2
			if x >= lo && x <= hi {
				match = true
			}
		} else if refLower(int(int8(p[i])), nocase) == refLower(int(int8(c)), nocase) {
			match = true
		}
		i++
	}
	// i is -1 for a lone "[" at the end: C then points back at the '['.
	return full[1+i:], match != not
}

// refLower is C's tolower on a (signed) char in the "C" locale.
func refLower(c int, nocase bool) int {
	if nocase && c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func randGlobInput(r *rand.Rand, alphabet string, n int) []byte {
	b := make([]byte, r.Intn(n+1))
	for i := range b {
		b[i] = alphabet[r.Intn(len(alphabet))]
	}
	return b
}

// TestGlobAgainstReference compares Glob with the recursive reference on
// random patterns full of metacharacters.
func TestGlobAgainstReference(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		p := randGlobInput(r, `ab*?[]^-\A`, 10)
		s := randGlobInput(r, `abAB*?[]\-`, 10)
		nocase := i%2 == 0
		if got, want := Glob(p, s, nocase), refMatch(p, s, nocase); got != want {
			t.Fatalf("Glob(%q, %q, %v) = %v, reference says %v", p, s, nocase, got, want)
		}
	}
}

// TestGlobAgainstRedis asks a real Redis: KEYS with random patterns over a
// fixed set of keys must return exactly the keys Glob matches.
func TestGlobAgainstRedis(t *testing.T) {
	conn := startRedis(t)
	r := bufio.NewReader(conn)
	do := func(args ...string) resptest.Value {
		t.Helper()
		cmd := fmt.Sprintf("*%d\r\n", len(args))
		for _, a := range args {
			cmd += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := conn.Write([]byte(cmd)); err != nil {
			t.Fatal(err)
		}
		v, err := resptest.Read(r)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	keys := []string{"", "a", "b", "ab", "ba", "aab", "abb", "a*b", "a?b", "[ab]", `a\b`, "-", "^a", "A", "aB", "abab"}
	for _, k := range keys {
		do("SET", k, "1")
	}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 3000; i++ {
		p := string(randGlobInput(rng, `ab*?[]^-\A`, 6))
		if p == "*" {
			continue // KEYS answers "*" without matching
		}
		arr, err := do("KEYS", p).Strings()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, k := range arr {
			got[k] = true
		}
		for _, k := range keys {
			if want := Glob([]byte(p), []byte(k), false); want != got[k] {
				t.Fatalf("pattern %q key %q: redis %v, Glob %v", p, k, got[k], want)
			}
		}
	}
}

func FuzzGlob(f *testing.F) {
	f.Add([]byte("a*b?[c-d]"), []byte("axbyc"), false)
	f.Add([]byte(`[^\]]*`), []byte("]x"), true)
	f.Fuzz(func(t *testing.T, p, s []byte, nocase bool) {
		if len(p) > 64 || len(s) > 64 {
			return
		}
		if got, want := Glob(p, s, nocase), refMatch(p, s, nocase); got != want {
			t.Fatalf("Glob(%q, %q, %v) = %v, reference says %v", p, s, nocase, got, want)
		}
	})
}
