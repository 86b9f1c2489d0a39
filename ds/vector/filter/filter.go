// Package filter is the FILTER expression language of vector-set searches (Redis 8's VSIM FILTER,
// and HotKV's VSIM.SEARCH FILTER): an expression over the top-level fields of an element's JSON
// attributes, compiled once per command and run per candidate.
//
// The language, as Redis 8's modules/vector-sets/expr.c defines it (facts, not code, carried over):
//   - literals: numbers (digits, '.', 'e'/'E', a leading '-'), strings in "…" or '…' with the
//     escapes \n \r \t and backslash-anything, null, tuples [1, "a", …] of numbers and strings;
//     HotKV adds true and false (1 and 0), which Redis 8 rejects as a syntax error;
//   - selectors .field (letters, digits, '_' and '-') naming a top-level JSON field; a missing
//     field, a nested object or bad JSON makes the whole expression false, never an error;
//   - operators by precedence, high to low: ( ); ! not (prefix, so !!x is x's truth, as in
//     Redis's tests/filter_double_not.py); ** (right associative); * / %; + -;
//     > >= < <= == != in; and &&; or ||. Operators are matched longest first over a run of
//     letters and the characters +-*%/!()<>=|& (so "innocent" reads as "in" then "nocent");
//   - a value is true when it is a non-zero number or any string but the empty one; null is
//     false. Arithmetic turns strings into numbers (0 when a string is not one); == compares
//     strings bytewise, numbers numerically, null equal only to null, mixed types as numbers;
//     a in b is membership when b is a tuple, substring when both are strings, else false.
//
// Compile returns *SyntaxError with the byte offset Redis's error reply quotes from. A compiled
// Expr is immutable: Match may run concurrently from many goroutines.
package filter

import (
	"math"
	"strconv"
)

type kind uint8

const (
	kNum kind = iota
	kStr
	kNull
	kTuple
	kSel // a selector in the program; never on the value stack
	kOp  // an operator in the program
)

type opcode uint8

const (
	opOParen opcode = iota
	opCParen
	opNot
	opPow
	opMul
	opDiv
	opMod
	opAdd
	opSub
	opGT
	opGTE
	opLT
	opLTE
	opEQ
	opNEQ
	opIn
	opAnd
	opOr
)

// The operator table: spelling, code, precedence and arity, as Redis 8's.
var ops = [...]struct {
	name  string
	code  opcode
	prec  int8
	arity int8
}{
	{"(", opOParen, 7, 0}, {")", opCParen, 7, 0},
	{"!", opNot, 6, 1}, {"not", opNot, 6, 1},
	{"**", opPow, 5, 2},
	{"*", opMul, 4, 2}, {"/", opDiv, 4, 2}, {"%", opMod, 4, 2},
	{"+", opAdd, 3, 2}, {"-", opSub, 3, 2},
	{">", opGT, 2, 2}, {">=", opGTE, 2, 2}, {"<", opLT, 2, 2}, {"<=", opLTE, 2, 2},
	{"==", opEQ, 2, 2}, {"!=", opNEQ, 2, 2}, {"in", opIn, 2, 2},
	{"and", opAnd, 1, 2}, {"&&", opAnd, 1, 2},
	{"or", opOr, 0, 2}, {"||", opOr, 0, 2},
}

var opPrec, opArity [opOr + 1]int8

func init() {
	for _, o := range ops {
		opPrec[o.code], opArity[o.code] = o.prec, o.arity
	}
}

// value is one token of a program or one value while it runs.
type value struct {
	kind  kind
	op    opcode
	num   float64
	str   []byte  // kStr's bytes, kSel's field name
	tuple []value // kTuple's elements (numbers and strings)
	pos   int     // offset in the expression, for errors
}

// Expr is a compiled expression in postfix order.
type Expr struct {
	prog  []value
	depth int // the deepest the value stack gets
}

// SyntaxError is a FILTER expression that does not compile. Pos is the byte offset Redis's
// reply quotes the expression from ("ERR syntax error in FILTER expression near: " + expr[Pos:]);
// it is 0 when the error is at the end.
type SyntaxError struct{ Pos int }

func (e *SyntaxError) Error() string {
	return "syntax error in FILTER expression at " + strconv.Itoa(e.Pos)
}

// Near returns the part of expr an error reply quotes.
func (e *SyntaxError) Near(expr []byte) []byte {
	if e.Pos >= len(expr) {
		return expr
	}
	return expr[e.Pos:]
}

// Compile parses expr. The Expr copies what it keeps: expr may be reused afterwards.
func Compile(expr []byte) (*Expr, error) {
	src := append([]byte(nil), expr...)
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	return compile(toks)
}

// syntaxErr is an error found while ordering the tokens. Redis 8's current expr.c sets no token
// offsets (exprNewToken zeroes them and exprTokenize does not assign one), so every such error
// quotes the whole expression; only the tokenizer's errors quote from where it stopped.
func syntaxErr() error { return &SyntaxError{} }

// compile orders the tokens into postfix by shunting-yard, checking arity as it goes.
func compile(toks []value) (*Expr, error) {
	e := &Expr{}
	var stack []value
	items := 0
	emit := func(op value) error {
		a := int(opArity[op.op])
		if items < a {
			return syntaxErr()
		}
		e.prog = append(e.prog, op)
		items = items - a + 1
		return nil
	}
	for _, t := range toks {
		if t.kind != kOp {
			e.prog = append(e.prog, t)
			items++
			e.depth = max(e.depth, items)
			continue
		}
		switch t.op {
		case opOParen:
			stack = append(stack, t)
			continue
		case opCParen:
			for {
				if len(stack) == 0 {
					return nil, syntaxErr()
				}
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if top.op == opOParen {
					break
				}
				if err := emit(top); err != nil {
					return nil, err
				}
			}
			continue
		}
		for opArity[t.op] == 2 && len(stack) > 0 { // a prefix operator pops nothing: !!x reads
			top := stack[len(stack)-1]
			if top.op == opOParen || opPrec[top.op] < opPrec[t.op] {
				break
			}
			if t.op == opPow && opPrec[top.op] <= opPrec[t.op] {
				break // ** is right associative
			}
			stack = stack[:len(stack)-1]
			if err := emit(top); err != nil {
				return nil, err
			}
		}
		stack = append(stack, t)
	}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if top.op == opOParen {
			return nil, syntaxErr()
		}
		if err := emit(top); err != nil {
			return nil, err
		}
	}
	if items != 1 {
		return nil, syntaxErr()
	}
	return e, nil
}

// Match runs the expression over one element's JSON attributes: true when it evaluates to a
// true value. Missing fields, unsupported values and bad JSON give false.
func (e *Expr) Match(json []byte) bool {
	var small [16]value
	st := small[:0]
	if e.depth > len(small) {
		st = make([]value, 0, e.depth)
	}
	for i := range e.prog {
		t := &e.prog[i]
		switch t.kind {
		case kSel:
			v, ok := extractField(json, t.str)
			if !ok {
				return false
			}
			st = append(st, v)
			continue
		case kOp:
		default:
			st = append(st, *t)
			continue
		}
		var a, b value
		b = st[len(st)-1]
		st = st[:len(st)-1]
		if opArity[t.op] == 2 {
			a = st[len(st)-1]
			st = st[:len(st)-1]
		}
		st = append(st, value{kind: kNum, num: apply(t.op, a, b)})
	}
	if len(st) == 0 {
		return false
	}
	return truth(st[len(st)-1])
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func apply(op opcode, a, b value) float64 {
	switch op {
	case opNot:
		return b2f(!truth(b))
	case opPow:
		return math.Pow(toNum(a), toNum(b))
	case opMul:
		return toNum(a) * toNum(b)
	case opDiv:
		return toNum(a) / toNum(b)
	case opMod:
		return math.Mod(toNum(a), toNum(b))
	case opAdd:
		return toNum(a) + toNum(b)
	case opSub:
		return toNum(a) - toNum(b)
	case opGT:
		return b2f(toNum(a) > toNum(b))
	case opGTE:
		return b2f(toNum(a) >= toNum(b))
	case opLT:
		return b2f(toNum(a) < toNum(b))
	case opLTE:
		return b2f(toNum(a) <= toNum(b))
	case opEQ:
		return b2f(equal(a, b))
	case opNEQ:
		return b2f(!equal(a, b))
	case opIn:
		return b2f(in(a, b))
	case opAnd:
		return b2f(truth(a) && truth(b))
	case opOr:
		return b2f(truth(a) || truth(b))
	}
	return 0
}

func in(a, b value) bool {
	switch {
	case b.kind == kTuple:
		for _, x := range b.tuple {
			if equal(a, x) {
				return true
			}
		}
	case a.kind == kStr && b.kind == kStr:
		return contains(b.str, a.str)
	}
	return false
}

func contains(s, sub []byte) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if string(s[i:i+len(sub)]) == string(sub) {
			return true
		}
	}
	return false
}

func truth(v value) bool {
	switch v.kind {
	case kNum:
		return v.num != 0
	case kStr:
		return len(v.str) != 0
	case kNull:
		return false
	}
	return true
}

// toNum is a value as a number: a string that is wholly a number (as strtod reads it) is that
// number, anything else that is not a number is 0.
func toNum(v value) float64 {
	switch v.kind {
	case kNum:
		return v.num
	case kStr:
		if len(v.str) < 256 {
			if f, ok := parseNum(v.str); ok {
				return f
			}
		}
	}
	return 0
}

func equal(a, b value) bool {
	switch {
	case a.kind == kStr && b.kind == kStr:
		return string(a.str) == string(b.str)
	case a.kind == kNum && b.kind == kNum:
		return a.num == b.num
	case a.kind == kNull || b.kind == kNull:
		return a.kind == b.kind
	}
	return toNum(a) == toNum(b)
}

// parseNum reads a whole decimal number as C's strtod does for the characters numbers are
// made of here (no hex, no inf/nan words, no underscores).
func parseNum(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // strtod saturates to ±HUGE_VAL or 0 too
		}
		return 0, false
	}
	return f, true
}
