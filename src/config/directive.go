package config

import (
	"strconv"
	"strings"
)

// flags mirror the properties Redis gives each config in its table.
type flags uint16

const (
	flagImmutable   flags = 1 << iota // CONFIG SET refuses it
	flagProtected                     // CONFIG SET needs enable-protected-configs
	flagMultiArg                      // value is several space-separated arguments
	flagHidden                        // CONFIG GET patterns skip it; exact names work
	flagDenyLoading                   // CONFIG SET refuses it while loading data
	flagSensitive                     // callers must redact its value from logs
	flagVolatile                      // names a file: CONFIG SET of the same value applies it again (reloads)
)

type kind uint8

const (
	kindBool kind = iota
	kindString
	kindEnum
	kindNum
	kindSpecial
)

// numFlags say which spellings a numeric directive accepts besides a plain
// integer, and how CONFIG GET and REWRITE print it.
type numFlags uint8

const (
	numMemory  numFlags = 1 << iota // 10mb, 1gb: printed in bytes
	numPercent                      // 5%: stored negative
	numOctal                        // 0777 without the leading zero
)

type enumItem struct {
	name string
	val  int64
	own  bool // HotKV's own value: accepted, but not listed in Redis's error (its bytes stay Redis's)
}

// directive is one row of the configuration table. The defaults are kept in
// CONFIG GET form and parsed once at start-up, so the table reads like
// `redis-cli CONFIG GET *`.
type directive struct {
	name, alias string
	flags       flags
	kind        kind
	def         string
	// noDef marks Redis's NULL defaults: REWRITE then always writes the
	// directive unless its value is unset.
	noDef bool
	// emptyNull: an empty string means unset, and REWRITE leaves it out.
	emptyNull bool

	num      numFlags
	unsigned bool  // bounds compare as unsigned, as Redis does for its unsigned C types
	lo, hi   int64 // bounds; read as uint64 when unsigned
	clamp    func(int64) int64
	// setClamp adjusts a value changed by CONFIG SET (not by the config
	// file), as some of Redis's apply functions do.
	setClamp func(int64) int64

	enum     []enumItem
	bitflags bool // several enum names combine into a bit set

	check  func(c *setCtx, v string) string // extra validation of strings; returns the error text
	checkN func(n int64) string             // the same for enums
	spec   *special
}

// value is a directive's current setting: n for booleans (0/1), enums and
// numbers (unsigned ones as their bits), s for strings and special kinds.
type value struct {
	n int64
	s string
}

// setCtx is what a setter may consult besides its own arguments.
type setCtx struct {
	loading  bool // reading the config file (save lines accumulate)
	saveSeen bool // a save line was already read from the file
	vals     []value
	file     string
	// applyDir: CONFIG SET defers the chdir to the apply step so a failing
	// multi-set can roll it back; the file loader changes directory at once.
	applyDir bool
}

func (d *directive) isMulti() bool { return d.flags&flagMultiArg != 0 }

// setArgs validates args and returns the value they set, or Redis's error
// text (without the "CONFIG SET failed ..." prefix).
func (d *directive) setArgs(c *setCtx, cur value, args []string) (value, string) {
	switch d.kind {
	case kindBool:
		return d.setBool(args[0])
	case kindString:
		if d.check != nil {
			if msg := d.check(c, args[0]); msg != "" {
				return cur, msg
			}
		}
		return value{s: args[0]}, ""
	case kindEnum:
		return d.setEnum(args)
	case kindNum:
		return d.setNum(args[0])
	}
	return d.spec.set(c, cur, args)
}

func (d *directive) setBool(arg string) (value, string) {
	switch asciiLower(arg) {
	case "yes":
		return value{n: 1}, ""
	case "no":
		return value{n: 0}, ""
	}
	return value{}, "argument must be 'yes' or 'no'"
}

func (d *directive) setEnum(args []string) (value, string) {
	var v int64
	ok := len(args) > 0 && (d.bitflags || len(args) == 1)
	for _, a := range args {
		matched := false
		for _, it := range d.enum {
			if asciiLower(a) == it.name {
				v |= it.val
				matched = true
			}
		}
		ok = ok && matched
	}
	if !ok {
		names := make([]string, 0, len(d.enum))
		for _, it := range d.enum {
			if !it.own {
				names = append(names, it.name)
			}
		}
		return value{}, "argument(s) must be one of the following: " + strings.Join(names, ", ")
	}
	if d.checkN != nil {
		if msg := d.checkN(v); msg != "" {
			return value{}, msg
		}
	}
	return value{n: v}, ""
}

// enumName renders an enum value as CONFIG GET shows it: the first name with
// that value, or for bit sets the names of its bits in table order.
func (d *directive) enumName(v int64) string {
	var names []string
	rest := v
	for _, it := range d.enum {
		if it.val == v {
			return it.name
		}
		if d.bitflags && it.val != 0 && it.val == rest&it.val {
			names = append(names, it.name)
			rest &^= it.val
		}
	}
	if len(names) == 0 || rest != 0 {
		return "unknown"
	}
	return strings.Join(names, " ")
}

func (d *directive) setNum(arg string) (value, string) {
	n, msg := d.parseNum(arg)
	if msg == "" {
		msg = d.checkBounds(n)
	}
	if msg != "" {
		return value{}, msg
	}
	if d.clamp != nil {
		n = d.clamp(n)
	}
	return value{n: n}, ""
}

// parseNum tries the spellings the directive allows in Redis's order:
// memory, percent, octal, plain integer.
func (d *directive) parseNum(arg string) (int64, string) {
	if d.num&numMemory != 0 {
		if u, ok := memToULL(arg); ok {
			return int64(u), ""
		}
	}
	if d.num&numPercent != 0 && len(arg) > 1 && arg[len(arg)-1] == '%' {
		if p, ok := parseLL(arg[:len(arg)-1]); ok && p >= 0 {
			return -p, ""
		}
	}
	if d.num&numOctal != 0 {
		if v, end, erange := strtoll(arg, 8); end && !erange {
			return v, ""
		}
	}
	if d.num == 0 {
		if v, ok := parseLL(arg); ok {
			return v, ""
		}
	}
	switch {
	case d.num&numMemory != 0 && d.num&numPercent != 0:
		return 0, "argument must be a memory or percent value"
	case d.num&numMemory != 0:
		return 0, "argument must be a memory value"
	case d.num&numOctal != 0:
		return 0, "argument couldn't be parsed as an octal number"
	}
	return 0, "argument couldn't be parsed into an integer"
}

func (d *directive) checkBounds(n int64) string {
	if d.unsigned {
		u, lo, hi := uint64(n), uint64(d.lo), uint64(d.hi)
		if u >= lo && u <= hi {
			return ""
		}
		if d.num&numOctal != 0 {
			return "argument must be between " + strconv.FormatUint(lo, 8) + " and " +
				strconv.FormatUint(hi, 8) + " inclusive"
		}
		return "argument must be between " + strconv.FormatUint(lo, 10) + " and " +
			strconv.FormatUint(hi, 10) + " inclusive"
	}
	if d.num&numPercent != 0 && n < 0 {
		if n < d.lo {
			return "percentage argument must be less or equal to " + strconv.FormatInt(-d.lo, 10)
		}
		return ""
	}
	if n < d.lo || n > d.hi {
		return "argument must be between " + strconv.FormatInt(d.lo, 10) + " and " +
			strconv.FormatInt(d.hi, 10) + " inclusive"
	}
	return ""
}

// get renders v as CONFIG GET does.
func (d *directive) get(v value) string {
	switch d.kind {
	case kindBool:
		if v.n != 0 {
			return "yes"
		}
		return "no"
	case kindString:
		return v.s
	case kindEnum:
		return d.enumName(v.n)
	case kindNum:
		return d.formatNum(v.n)
	}
	return d.spec.get(v)
}

func (d *directive) formatNum(n int64) string {
	switch {
	case d.num&numPercent != 0 && n < 0:
		return strconv.FormatInt(-n, 10) + "%"
	case d.num&numMemory != 0:
		return strconv.FormatUint(uint64(n), 10)
	case d.num&numOctal != 0:
		return strconv.FormatUint(uint64(n), 8)
	}
	return strconv.FormatInt(n, 10)
}

// splitValue turns a CONFIG SET value into the directive's arguments:
// multi-argument directives split on single spaces, keeping empty pieces,
// exactly as Redis's sdssplitlen does ("" gives no argument at all).
func (d *directive) splitValue(v string) []string {
	if !d.isMulti() {
		return []string{v}
	}
	if v == "" {
		return nil
	}
	return strings.Split(v, " ")
}
