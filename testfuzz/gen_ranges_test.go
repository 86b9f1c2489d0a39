package testfuzz

import (
	"math"
	"strconv"
	"strings"
)

// Range arguments shared by the list and sorted-set generators. Ranges are mostly well ordered
// (so they select something) and sometimes reversed, empty or malformed.

// indexes are LRANGE/LINDEX/LSET/LTRIM/ZRANGE positions, in range or past either end.
var indexes = []string{"0", "1", "2", "-1", "-2", "-3", "4", "10", "-100", "100"}

// badIndexes are not numbers or sit at the ends of the int64 range.
var badIndexes = []string{"x", "1.5", "", "9223372036854775807", "-9223372036854775808"}

// scoreBounds are BYSCORE/ZCOUNT bounds: inclusive, exclusive and infinite; badScoreBounds are
// malformed.
var (
	scoreBounds    = []string{"-inf", "+inf", "inf", "0", "1", "(1", "2.5", "(2.5", "10", "(-1", "-1", "(inf", "(-inf", "0.1", "(0"}
	badScoreBounds = []string{"x", "(", "nan", "[1", "1x"}
)

// lexBounds are BYLEX bounds; badLexBounds lack the [ ( - + prefix or have extra bytes.
var (
	lexBounds    = []string{"-", "+", "[a", "(a", "[b", "(c", "[1", "(10", "[", "(", "[x y", "[member", "(d"}
	badLexBounds = []string{"a", "-x", "+y", ""}
)

// indexRange returns a start and stop that mostly select something from a short list.
func (g *gen) indexRange() []string {
	if g.chance(0.3) {
		return []string{g.index(), g.index()}
	}
	return []string{g.pick([]string{"0", "0", "1", "2", "-2", "-3", "-100"}), g.pick([]string{"-1", "-1", "10", "3", "1", "-2", "100"})}
}

func (g *gen) index() string {
	if g.chance(0.08) {
		return g.pick(badIndexes)
	}
	return g.pick(indexes)
}

// scoreRange returns a min and max (max and min when desc), mostly in that order.
func (g *gen) scoreRange(desc bool) []string {
	a, b := g.pick(scoreBounds), g.pick(scoreBounds)
	if g.chance(0.05) {
		a = g.pick(badScoreBounds)
	}
	if g.chance(0.8) && (scoreBoundValue(a) > scoreBoundValue(b)) != desc {
		a, b = b, a
	}
	return []string{a, b}
}

// lexRange returns a min and max (max and min when desc), mostly in that order.
func (g *gen) lexRange(desc bool) []string {
	a, b := g.pick(lexBounds), g.pick(lexBounds)
	if g.chance(0.05) {
		a = g.pick(badLexBounds)
	}
	if g.chance(0.8) && (lexBoundLess(b, a)) != desc {
		a, b = b, a
	}
	return []string{a, b}
}

func scoreBoundValue(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimPrefix(s, "("), 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// lexBoundLess orders lex bounds by the strings they name, "-" first and "+" last.
func lexBoundLess(a, b string) bool {
	rank := func(s string) (int, string) {
		switch s {
		case "-":
			return 0, ""
		case "+":
			return 2, ""
		}
		if s == "" {
			return 1, ""
		}
		return 1, s[1:]
	}
	ra, sa := rank(a)
	rb, sb := rank(b)
	return ra < rb || (ra == rb && sa < sb)
}
