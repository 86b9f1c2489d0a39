package acl

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/ds/strs"
)

// testCatalog is a small command set: plain commands in several categories, and a container.
func testCatalog() *Catalog {
	id := 0
	cmd := func(name string, cats ...string) *Cmd {
		c := &Cmd{ID: id, Name: name, Redis: true}
		id++
		for _, k := range cats {
			c.Cats |= CategoryBit(k)
		}
		return c
	}
	cl := cmd("client", "slow")
	cl.Subs = []*Cmd{cmd("client|id", "slow", "connection"), cmd("client|kill", "admin", "slow", "dangerous")}
	return NewCatalog([]*Cmd{
		cmd("get", "read", "string", "fast"), cmd("set", "write", "string", "slow"),
		cmd("hget", "read", "hash", "fast"), cmd("hset", "write", "hash", "fast"),
		cmd("flushall", "keyspace", "write", "slow", "dangerous"), cmd("auth", "fast", "connection"), cl,
		cmd("select", "fast", "connection"),
	})
}

// The fast matchers agree with strs.Glob, the reference, on random patterns and strings.
func TestMatcherAgainstGlob(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []byte("ab*?[]\\:")
	word := func(n int) []byte {
		b := make([]byte, rng.IntN(n))
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		return b
	}
	for range 200000 {
		p, s := word(6), word(6)
		m := newMatcher(p)
		if got, want := m.match(s), strs.Glob(p, s, false); got != want {
			t.Fatalf("pattern %q on %q: %v, Glob %v (kind %d)", p, s, got, want, m.kind)
		}
	}
}

// Described rules replay to the same bitmap (CommandRules panics otherwise), and a registry's
// ACL file text parses back to the same users.
func TestRulesRoundTrip(t *testing.T) {
	cat := testCatalog()
	rng := rand.New(rand.NewPCG(3, 4))
	ops := []string{"+@all", "-@all", "+@read", "-@read", "+@write", "-@fast", "+@slow", "-@dangerous", "+get",
		"-get", "+client", "-client", "+client|id", "-client|kill", "+select|0", "+select|1", "+hset", "-@hash",
		"allcommands", "nocommands", "+@connection", "-@string", "~a*", "%R~b", "%W~c*", "&ch", "resetkeys",
		"resetchannels", "on", "off", ">pw", "nopass", "resetpass", "(+get ~x)", "clearselectors"}
	for range 3000 {
		r := NewRegistry(cat)
		for u := range 3 {
			var rules []string
			for range rng.IntN(12) {
				rules = append(rules, ops[rng.IntN(len(ops))])
			}
			name := string(rune('a' + u))
			if _, _, err := r.SetUser(name, rules); err != nil {
				continue // ~a after allkeys and the like
			}
		}
		text := r.FileText()
		users, errs := r.ParseFile(text, "x.acl")
		if errs != "" {
			t.Fatalf("own file refused: %s\n%s", errs, text)
		}
		r2 := NewRegistry(cat)
		r2.Replace(users)
		if got := r2.FileText(); got != text {
			t.Fatalf("round trip:\n%s\nbecame\n%s", text, got)
		}
	}
}

// Passwords: any of a user's passwords logs in, others do not, nopass takes anything, an off
// user nothing; the file keeps only digests.
func TestPasswords(t *testing.T) {
	r := NewRegistry(testCatalog())
	r.SetUser("u", []string{"on", ">one", ">two"})
	for pass, ok := range map[string]bool{"one": true, "two": true, "three": false, "": false} {
		if got := r.Authenticate([]byte("u"), []byte(pass)) != nil; got != ok {
			t.Errorf("password %q: %v", pass, got)
		}
	}
	if strings.Contains(r.FileText(), "one") {
		t.Errorf("plain password in the file: %s", r.FileText())
	}
	r.SetUser("u", []string{"nopass"})
	if r.Authenticate([]byte("u"), []byte("anything")) == nil {
		t.Error("nopass refused")
	}
	r.SetUser("u", []string{"off"})
	if r.Authenticate([]byte("u"), []byte("anything")) != nil || r.Authenticate([]byte("nobody"), nil) != nil {
		t.Error("off or unknown user accepted")
	}
}
