package command

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/hotkv/hotkv/src/command/meta"
)

// allSpecs returns every command and subcommand of the table, by name.
func allSpecs() []*Spec {
	var out []*Spec
	for _, s := range Commands() {
		out = append(out, s)
		for _, sub := range s.Subs {
			out = append(out, sub)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TestTableMatchesRedis is the golden test of the command table: every command HotKV shares with
// Redis 7.0 has Redis's arity, flags and key positions (as COMMAND INFO reports them), a key
// function when Redis finds its keys by parsing (movablekeys; HotKV may also route other commands
// by a key function, as DEBUG OBJECT), and subcommands when Redis's is a
// container.
func TestTableMatchesRedis(t *testing.T) {
	checked := 0
	for _, s := range allSpecs() {
		m := meta.Lookup(s.Name)
		if m == nil {
			continue // HotKV's own command
		}
		checked++
		for _, d := range specDiffs(s, m) {
			if newerSyntax[s.Name] == d {
				continue
			}
			t.Errorf("%s: %s", s.Name, d)
		}
	}
	t.Logf("%d commands checked against Redis %s", checked, meta.Version)
}

// newerSyntax lists the differences HotKV keeps on purpose because it accepts a later Redis's
// syntax that clients use (ZRANK/ZREVRANK WITHSCORE is Redis 7.2's).
var newerSyntax = map[string]string{
	"zrank":    "Arity is -3, Redis 7.0 has 3",
	"zrevrank": "Arity is -3, Redis 7.0 has 3",
}

// specDiffs lists the differences between a spec and Redis's metadata for the same command.
func specDiffs(s *Spec, m *meta.Command) []string {
	var out []string
	field := func(name string, got, want any) {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			out = append(out, fmt.Sprintf("%s is %v, Redis 7.0 has %v", name, got, want))
		}
	}
	field("Arity", s.Arity, m.Arity)
	got, want := s.Flags.Names(), slices.Clone(m.Flags)
	slices.Sort(got)
	slices.Sort(want)
	field("Flags", got, want)
	field("FirstKey", s.FirstKey, m.FirstKey)
	field("LastKey", s.LastKey, m.LastKey)
	field("Step", s.Step, m.Step)
	if slices.Contains(m.Flags, "movablekeys") && s.Keys == nil && s.NumKeys == 0 {
		out = append(out, "Keys is nil, but Redis 7.0 finds its keys by parsing (movablekeys)")
	}
	field("NumKeys", s.NumKeys, keynumIndex(m))
	field("Subs (container)", s.Subs != nil, len(m.Subs) > 0)
	return out
}

// keynumIndex is the position of the numkeys argument of Redis's "keynum" key spec, or 0.
func keynumIndex(m *meta.Command) int {
	for _, k := range m.KeySpecs {
		if k.FindKeys == "keynum" && k.BeginSearch == "index" {
			return k.Index + k.KeyNumIdx
		}
	}
	return 0
}

// The golden test fails, naming the field, for each kind of difference.
func TestSpecDiffs(t *testing.T) {
	get, zunion := meta.Lookup("get"), meta.Lookup("zunion")
	if d := specDiffs(&Spec{Name: "zunion", Arity: -3, Flags: ReadOnly | MovableKeys}, zunion); len(d) != 2 ||
		d[0] != "Keys is nil, but Redis 7.0 finds its keys by parsing (movablekeys)" || d[1] != "NumKeys is 0, Redis 7.0 has 1" {
		t.Errorf("zunion without a key finder: %q", d)
	}
	if d := specDiffs(&Spec{Name: "zunion", Arity: -3, Flags: ReadOnly | MovableKeys, NumKeys: 2}, zunion); len(d) != 1 ||
		d[0] != "NumKeys is 2, Redis 7.0 has 1" {
		t.Errorf("zunion with numkeys at 2: %q", d)
	}
	f := func(edit func(s *Spec), want string) {
		t.Helper()
		s := &Spec{Name: "get", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1}
		edit(s)
		d := specDiffs(s, get)
		if want == "" && len(d) == 0 {
			return
		}
		if len(d) != 1 || d[0] != want {
			t.Errorf("diffs %q, want [%q]", d, want)
		}
	}
	f(func(*Spec) {}, "")
	f(func(s *Spec) { s.Arity = -2 }, "Arity is -2, Redis 7.0 has 2")
	f(func(s *Spec) { s.Flags = Write | Fast }, "Flags is [fast write], Redis 7.0 has [fast readonly]")
	f(func(s *Spec) { s.FirstKey = 2 }, "FirstKey is 2, Redis 7.0 has 1")
	f(func(s *Spec) { s.LastKey = -1 }, "LastKey is -1, Redis 7.0 has 1")
	f(func(s *Spec) { s.Step = 2 }, "Step is 2, Redis 7.0 has 1")
	f(func(s *Spec) { s.Keys = func(args [][]byte, dst []int) []int { return dst } }, "")
	f(func(s *Spec) { s.Subs = map[string]*Spec{} }, "Subs (container) is true, Redis 7.0 has false")
}
