package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// An expectation is what every reply to one template must say, compiled once from an --expect
// spelling (or inferred from the command's name) so that checking a reply compares a few bytes
// and allocates nothing:
//
//	any            anything but an error (what redis-benchmark and memtier check)
//	value          anything but an error or a null
//	nil            a null ($-1, *-1 or RESP3 _)
//	ok             +OK
//	simple:TEXT    the simple string +TEXT, such as simple:PONG
//	bulk           a bulk string (not a null); bulk:N one of exactly N bytes
//	data           a bulk string holding the bytes of __data__
//	double         a score: a RESP3 double, or the number as a bulk string (RESP2)
//	int            an integer; int:N exactly N; int:>=N, int:<=N, int:A..B a range
//	array          an array (or RESP3 set or map, counted as elements); array:N exactly N elements,
//	               array:>=N, array:A..B a range; each element must not be a null, and array:...:E
//	               checks every element against the expectation E, as in array:8:data or array:3:int:1
//
// A miss is a null (reply or element), an integer 0 where an integer is expected, or an empty array
// where an array is expected. --allow-misses counts misses as successes, whatever the expectation.
type expectation struct {
	spec     string // as given or inferred, for messages and the JSON result
	kind     expectKind
	text     []byte       // simple: the string; data: __data__
	size     int          // bulk: the exact length, or -1 for any
	lo, hi   int64        // int: the value's range; array: the element count's range
	elem     *expectation // array: what each element must be (value unless given)
	misses   bool         // --allow-misses
	inferred bool         // from the command's name, not --expect
	command  string       // the command's name, for the message of an inferred expectation
}

type expectKind uint8

const (
	expectAny expectKind = iota
	expectValue
	expectNil
	expectSimple
	expectBulk
	expectData
	expectDouble
	expectInt
	expectArray
)

// parseExpect compiles an --expect spelling; data is the __data__ value the data kind compares with.
func parseExpect(spec string, data []byte) (*expectation, error) {
	e, err := parseKind(spec, data)
	if err != nil {
		return nil, fmt.Errorf("--expect %q: %w", spec, err)
	}
	e.spec = spec
	return e, nil
}

func parseKind(spec string, data []byte) (*expectation, error) {
	kind, arg, hasArg := strings.Cut(spec, ":")
	e := &expectation{size: -1, lo: math.MinInt64, hi: math.MaxInt64}
	noArg := func(k expectKind) (*expectation, error) {
		if hasArg {
			return nil, fmt.Errorf("%s takes no argument", kind)
		}
		e.kind = k
		return e, nil
	}
	switch kind {
	case "any":
		return noArg(expectAny)
	case "value":
		return noArg(expectValue)
	case "nil":
		return noArg(expectNil)
	case "double":
		return noArg(expectDouble)
	case "ok":
		e.text = []byte("OK")
		return noArg(expectSimple)
	case "data":
		e.text = data
		return noArg(expectData)
	case "simple":
		if arg == "" || strings.ContainsAny(arg, "\r\n") {
			return nil, errors.New("simple needs the text of the reply, as in simple:PONG")
		}
		e.kind, e.text = expectSimple, []byte(arg)
		return e, nil
	case "bulk":
		e.kind = expectBulk
		if !hasArg {
			return e, nil
		}
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bulk:%s: the length must be a non-negative integer", arg)
		}
		e.size = n
		return e, nil
	case "int":
		e.kind = expectInt
		if !hasArg {
			return e, nil
		}
		return e, e.parseRange(arg)
	case "array":
		e.kind, e.lo = expectArray, 0
		if err := e.parseArray(arg, hasArg, data); err != nil {
			return nil, err
		}
		if e.elem == nil {
			e.elem = &expectation{spec: "value", kind: expectValue, size: -1}
		}
		return e, nil
	}
	return nil, errors.New("unknown kind; one of any, value, nil, ok, simple:TEXT, bulk[:N], data, double, int[:N|:>=N|:<=N|:A..B], array[:N|:>=N|:A..B][:ELEMENT]")
}

// parseArray reads array's optional count and element: "8", "8:data", ">=1", "bulk".
func (e *expectation) parseArray(arg string, hasArg bool, data []byte) error {
	if !hasArg {
		return nil
	}
	count, rest, hasElem := arg, "", false
	if arg != "" && (arg[0] >= '0' && arg[0] <= '9' || arg[0] == '>' || arg[0] == '<') {
		count, rest, hasElem = strings.Cut(arg, ":")
		if err := e.parseRange(count); err != nil {
			return err
		}
		if e.lo < 0 {
			e.lo = 0
		}
	} else {
		rest, hasElem = arg, true
	}
	if !hasElem {
		return nil
	}
	elem, err := parseKind(rest, data)
	if err != nil {
		return fmt.Errorf("array element: %w", err)
	}
	if elem.kind == expectArray {
		return errors.New("array elements cannot be checked as arrays")
	}
	elem.spec = rest
	e.elem = elem
	return nil
}

// parseRange reads N, >=N, <=N or A..B into e.lo and e.hi.
func (e *expectation) parseRange(s string) error {
	num := func(s string) (int64, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	}
	var err error
	switch {
	case strings.HasPrefix(s, ">="):
		e.lo, err = num(s[2:])
	case strings.HasPrefix(s, "<="):
		e.hi, err = num(s[2:])
	case strings.Contains(s, ".."):
		a, b, _ := strings.Cut(s, "..")
		if e.lo, err = num(a); err == nil {
			e.hi, err = num(b)
		}
		if err == nil && e.lo > e.hi {
			err = fmt.Errorf("empty range %s", s)
		}
	default:
		e.lo, err = num(s)
		e.hi = e.lo
	}
	return err
}

// inferExpect is the expectation of a template given no --expect, from its command's name and
// argument count: reads expect a hit (GET a bulk string, MGET as many bulk strings as it names keys,
// SISMEMBER 1, ZRANGE at least one member), SET and MSET +OK, counting writes an integer, and
// anything not listed anything but an error.
func inferExpect(words []string) string {
	name, n := strings.ToUpper(words[0]), len(words)
	hasWord := func(opts ...string) bool {
		for _, w := range words[1:] {
			for _, o := range opts {
				if strings.EqualFold(w, o) {
					return true
				}
			}
		}
		return false
	}
	switch name {
	case "GET", "HGET", "LINDEX":
		return "bulk"
	case "LPOP", "RPOP":
		if n == 2 {
			return "bulk"
		}
		return "value"
	case "ZSCORE":
		return "double"
	case "MGET":
		return fmt.Sprintf("array:%d:bulk", n-1)
	case "HMGET":
		return fmt.Sprintf("array:%d:bulk", max(n-2, 0))
	case "SISMEMBER", "HEXISTS":
		return "int:1"
	case "SMISMEMBER":
		return fmt.Sprintf("array:%d:int:1", max(n-2, 0))
	case "EXISTS":
		return fmt.Sprintf("int:%d", n-1)
	case "ZRANGE":
		return "array:>=1"
	case "SET":
		if hasWord("NX", "XX", "GET") {
			return "any" // a null when the condition fails, the old value with GET
		}
		return "ok"
	case "MSET", "HMSET", "LSET", "LTRIM", "SETEX", "PSETEX", "SELECT", "FLUSHDB", "FLUSHALL", "RENAME":
		return "ok"
	case "PING":
		if n == 1 {
			return "simple:PONG"
		}
		return "bulk"
	case "ECHO", "INCRBYFLOAT", "HINCRBYFLOAT":
		return "bulk"
	case "LPUSH", "RPUSH":
		return "int:>=1"
	case "ZADD":
		if hasWord("INCR") {
			return "any"
		}
		return "int"
	case "INCR", "DECR", "INCRBY", "DECRBY", "APPEND", "SETNX", "DEL", "UNLINK", "SADD", "SREM", "HSET",
		"HSETNX", "HDEL", "HINCRBY", "ZREM", "LLEN", "SCARD", "HLEN", "ZCARD", "STRLEN", "EXPIRE", "PEXPIRE",
		"PFADD", "LPUSHX", "RPUSHX":
		return "int"
	}
	return "any"
}

// describe says what the expectation accepts, for the message of a reply that did not match.
func (e *expectation) describe() string {
	switch e.kind {
	case expectValue:
		return "any reply but a null"
	case expectNil:
		return "a null"
	case expectSimple:
		return "+" + string(e.text)
	case expectBulk:
		if e.size >= 0 {
			return fmt.Sprintf("a bulk string of %d bytes", e.size)
		}
		return "a bulk string"
	case expectData:
		return fmt.Sprintf("a bulk string holding __data__ (%d bytes)", len(e.text))
	case expectDouble:
		return "a score (a double, or a number as a bulk string)"
	case expectInt:
		return e.describeInt()
	case expectArray:
		if e.elem.kind == expectValue {
			return e.describeArray() + ", none of them null"
		}
		return e.describeArray() + ", each " + e.elem.describe()
	}
	return "any reply but an error"
}

func (e *expectation) describeInt() string {
	switch {
	case e.lo == e.hi:
		return fmt.Sprintf("the integer %d", e.lo)
	case e.lo == math.MinInt64 && e.hi == math.MaxInt64:
		return "an integer"
	case e.hi == math.MaxInt64:
		return fmt.Sprintf("an integer >= %d", e.lo)
	case e.lo == math.MinInt64:
		return fmt.Sprintf("an integer <= %d", e.hi)
	}
	return fmt.Sprintf("an integer in %d..%d", e.lo, e.hi)
}

func (e *expectation) describeArray() string {
	elements := func(n int64) string {
		if n == 1 {
			return "1 element"
		}
		return fmt.Sprintf("%d elements", n)
	}
	switch {
	case e.lo == e.hi:
		return "an array of " + elements(e.lo)
	case e.lo == 0 && e.hi == math.MaxInt64:
		return "an array"
	case e.hi == math.MaxInt64:
		return "an array of at least " + elements(e.lo)
	case e.lo == 0:
		return "an array of at most " + elements(e.hi)
	}
	return fmt.Sprintf("an array of %d..%d elements", e.lo, e.hi)
}

// allowMisses makes e and its elements count misses as successes.
func (e *expectation) allowMisses() {
	e.misses = true
	if e.elem != nil {
		e.elem.misses = true
	}
}
