package filter

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Cases whose answers follow Redis 8's modules/vector-sets/expr.c and tests/filter_expr.py,
// filter_int.py, filter_double_not.py and filter_string_escape.py (read, not run: no Redis 8
// binary runs here).
func TestMatch(t *testing.T) {
	movie := `{"year": 1984, "name": "The Matrix", "rating": 8.7, "genre": "action", "tags": ["a", "b", 3], "ok": true, "no": false, "nil": null, "obj": {"x": 1}, "esc": "a\"b\\c\nd", "n": "42"}`
	cases := []struct {
		expr string
		want bool
	}{
		{".year > 1980", true},
		{".year > 1980 and .rating >= 8.7", true},
		{".year < 1980 or .name == 'The Matrix'", true},
		{".year < 1980 || .name == \"The Matrix\"", true},
		{"(5+2)*3 and .year > 1980 and 'foo' == 'foo'", true},
		{"!(.year > 1980)", false},
		{"not .year > 1980", false}, // not binds tighter than >: (not 1984) > 1980
		{"!!.year", true},
		{"!!!.ok", false},
		{"!!.year == 1", true},
		{".nil == null and (.nil == null)", true},
		{"not not .ok", true},
		{".no", false},
		{".ok && !.no", true},
		{".genre in ['action', 'drama']", true},
		{".genre in ['drama']", false},
		{"'act' in .genre", true},
		{"'xyz' in .genre", false},
		{"'a' in .tags", true},
		{"3 in .tags", true},
		{"'3' in .tags", true}, // mixed types compare as numbers
		{"4 in .tags", false},
		{".year in [1984, 1999]", true},
		{".missing == 1", false},
		{"not .missing", false}, // a missing field makes the whole expression false
		{".missing or 1", false},
		{".obj == 1", false}, // nested objects are unsupported: false
		{".nil == null", true},
		{".nil", false},
		{".esc == 'a\\\"b\\\\c\\nd'", true},
		{"'\\\"b' in .esc", true},
		{".n == 42", true},
		{".n + 1 == 43", true},
		{".name + 1 == 1", true}, // a string that is not a number counts 0
		{"2 ** 3 ** 2 == 512", true},
		{"10 % 4 == 2", true},
		{"1 / 0 > 1000", true},
		{"-1 < 0", true},
		{"5 - -1 == 6", true},
		{"(1) - 1 == 0", true},
		{"1 + 2 * 3 == 7", true},
		{"1 == 1 == 1", true},
		{"0 or 0 and 1", false},
		{"1 or 0 and 0", true},
		{"''", false},
		{"'x'", true},
		{"null == null", true},
		{"null == 0", false},
		{"true and not false", true},
		{"1e3 == 1000", true},
		{".year==1984", true},
	}
	for _, c := range cases {
		e, err := Compile([]byte(c.expr))
		if err != nil {
			t.Errorf("Compile(%q): %v", c.expr, err)
			continue
		}
		if got := e.Match([]byte(movie)); got != c.want {
			t.Errorf("%q = %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestBadJSONNeverMatches(t *testing.T) {
	e, err := Compile([]byte(".a == 1 or 1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"", "{", "[1]", `{"a" 1}`, `{"b":{"a":1}`, `{"a":tru}`, `{"a":"x}`, `null`, `{"b":1,}`} {
		if e.Match([]byte(doc)) {
			t.Errorf("matched %q", doc)
		}
	}
	if !e.Match([]byte(` { "a" : 1 } `)) {
		t.Error("spaces around a valid document")
	}
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct {
		expr, near string
	}{
		{"", ""},
		{".a ==", ".a =="},
		{"(1", "(1"},
		{"1)", "1)"},
		{"1 2", "1 2"},
		{"foo", "foo"},
		{"'open", "'open"},
		{"[1, x]", "x]"},
		{"1 + foo", "1 + foo"}, // Redis quotes from after the unknown word: its end, so all of it
		{".a == #", "#"},
		{"and", "and"},
		{"1 +", "1 +"},
		{"1e", "1e"},
		{"1.2.3", "1.2.3"},
		{".", "."},
		{"- (1)", "- (1)"},
	}
	for _, c := range cases {
		_, err := Compile([]byte(c.expr))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) = %v, want a syntax error", c.expr, err)
			continue
		}
		if got := string(se.Near([]byte(c.expr))); got != c.near {
			t.Errorf("Compile(%q) near %q, want %q", c.expr, got, c.near)
		}
	}
}

// node is a reference expression tree, printed fully parenthesized so the property test checks
// evaluation against a tree walker independent of the compiler.
type node struct {
	op   string // "" for a leaf
	leaf string
	l, r *node
}

func (n *node) String() string {
	switch {
	case n.op == "":
		return n.leaf
	case n.l == nil:
		return "(" + n.op + " " + n.r.String() + ")"
	}
	return "(" + n.l.String() + " " + n.op + " " + n.r.String() + ")"
}

var binOps = []string{"+", "-", "*", "/", "%", ">", ">=", "<", "<=", "==", "!=", "in", "and", "or", "&&", "||", "**"}
var fields = []string{"a", "b", "c", "s", "t", "arr", "nul", "gone"}

func genNode(r *rand.Rand, depth int) *node {
	if depth == 0 || r.IntN(3) == 0 {
		switch r.IntN(5) {
		case 0:
			return &node{leaf: "." + fields[r.IntN(len(fields))]}
		case 1:
			return &node{leaf: strconv.Itoa(r.IntN(7) - 2)}
		case 2:
			return &node{leaf: "'" + []string{"", "x", "ab", "3", "xy"}[r.IntN(5)] + "'"}
		case 3:
			return &node{leaf: []string{"[1, 'x', 3]", "[]", "['ab', -2]", "null"}[r.IntN(4)]}
		}
		return &node{leaf: "." + fields[r.IntN(3)]}
	}
	if r.IntN(6) == 0 {
		return &node{op: []string{"!", "not"}[r.IntN(2)], r: genNode(r, depth-1)}
	}
	return &node{op: binOps[r.IntN(len(binOps))], l: genNode(r, depth-1), r: genNode(r, depth-1)}
}

// rv is a reference value: float64, string, nil (null) or []any.
type missing struct{}

func refLeaf(leaf string, doc map[string]any) any {
	switch {
	case strings.HasPrefix(leaf, "."):
		v, ok := doc[leaf[1:]]
		if !ok {
			return missing{}
		}
		switch x := v.(type) {
		case bool:
			if x {
				return 1.0
			}
			return 0.0
		case map[string]any:
			return missing{}
		}
		return v
	case leaf == "null":
		return nil
	case strings.HasPrefix(leaf, "'"):
		return leaf[1 : len(leaf)-1]
	case strings.HasPrefix(leaf, "["):
		var out []any
		if err := json.Unmarshal([]byte(strings.ReplaceAll(leaf, "'", `"`)), &out); err != nil {
			panic(err)
		}
		if out == nil {
			out = []any{}
		}
		return out
	}
	f, _ := strconv.ParseFloat(leaf, 64)
	return f
}

func refNum(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil || x == "" || strings.ContainsAny(x, "xXnN_iI") {
			return 0
		}
		return f
	}
	return 0
}

func refTrue(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != 0
	case string:
		return x != ""
	case nil:
		return false
	}
	return true
}

func refEq(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return as == bs
	}
	an, aok := a.(float64)
	bn, bok := b.(float64)
	if aok && bok {
		return an == bn
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return refNum(a) == refNum(b)
}

func bf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// refEval returns the value, or missing{} when a selector anywhere below failed.
func refEval(n *node, doc map[string]any) any {
	if n.op == "" {
		return refLeaf(n.leaf, doc)
	}
	b := refEval(n.r, doc)
	if _, ok := b.(missing); ok {
		return b
	}
	if n.l == nil {
		return bf(!refTrue(b))
	}
	a := refEval(n.l, doc)
	if _, ok := a.(missing); ok {
		return a
	}
	switch n.op {
	case "+":
		return refNum(a) + refNum(b)
	case "-":
		return refNum(a) - refNum(b)
	case "*":
		return refNum(a) * refNum(b)
	case "/":
		return refNum(a) / refNum(b)
	case "%":
		return math.Mod(refNum(a), refNum(b))
	case "**":
		return math.Pow(refNum(a), refNum(b))
	case ">":
		return bf(refNum(a) > refNum(b))
	case ">=":
		return bf(refNum(a) >= refNum(b))
	case "<":
		return bf(refNum(a) < refNum(b))
	case "<=":
		return bf(refNum(a) <= refNum(b))
	case "==":
		return bf(refEq(a, b))
	case "!=":
		return bf(!refEq(a, b))
	case "and", "&&":
		return bf(refTrue(a) && refTrue(b))
	case "or", "||":
		return bf(refTrue(a) || refTrue(b))
	case "in":
		if arr, ok := b.([]any); ok {
			for _, x := range arr {
				if refEq(a, x) {
					return 1.0
				}
			}
			return 0.0
		}
		as, aok := a.(string)
		bs, bok := b.(string)
		return bf(aok && bok && strings.Contains(bs, as))
	}
	panic(n.op)
}

func TestMatchAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	docs := []string{
		`{"a": 1, "b": 2.5, "c": "3", "s": "xyz", "t": true, "arr": ["x", 1, "ab"], "nul": null}`,
		`{"a": 0, "b": -2, "c": "", "s": "ab", "t": false, "arr": [], "nul": null, "gone": {"z": 1}}`,
		`{"a": "x", "b": "abc", "c": 3, "s": "", "t": 1, "arr": [3, "3"], "nul": 0}`,
	}
	for i := 0; i < 20000; i++ {
		n := genNode(r, 4)
		src := n.String()
		e, err := Compile([]byte(src))
		if err != nil {
			t.Fatalf("Compile(%q): %v", src, err)
		}
		for _, d := range docs {
			var doc map[string]any
			if err := json.Unmarshal([]byte(d), &doc); err != nil {
				t.Fatal(err)
			}
			ref := refEval(n, doc)
			_, miss := ref.(missing)
			want := !miss && refTrue(ref)
			if got := e.Match([]byte(d)); got != want {
				t.Fatalf("%s over %s = %v, reference %v", src, d, got, want)
			}
		}
	}
}

func TestMatchAllocatesNothing(t *testing.T) {
	e, _ := Compile([]byte(".year > 1980 and .genre == 'action' and 'act' in .genre"))
	doc := []byte(`{"year": 1984, "genre": "action"}`)
	if n := testing.AllocsPerRun(100, func() { e.Match(doc) }); n != 0 {
		t.Errorf("Match allocates %v", n)
	}
}

func FuzzFilter(f *testing.F) {
	for _, s := range []string{".a > 1", "(.a + 2) * 3 in [1, 'x']", "'x' in .s or not .t", "[", "'a\\", "1 ** -", ".a-b == null"} {
		f.Add(s, `{"a": 1, "s": "xyz", "t": [1, "2"]}`)
	}
	f.Fuzz(func(t *testing.T, expr, doc string) {
		e, err := Compile([]byte(expr))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(expr) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		e.Match([]byte(doc))
		_ = fmt.Sprint(e.depth)
	})
}

// BenchmarkMatch is one FILTER evaluation over a small attribute document, VSIM's per-candidate
// cost with FILTER.
func BenchmarkMatch(b *testing.B) {
	e, err := Compile([]byte(".year > 1980 and .genre == 'action' and 'act' in .genre"))
	if err != nil {
		b.Fatal(err)
	}
	doc := []byte(`{"title": "The Terminator", "year": 1984, "genre": "action", "rating": 8.1}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if !e.Match(doc) {
			b.Fatal("no match")
		}
	}
}
