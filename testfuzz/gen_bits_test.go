package testfuzz

import "strconv"

// The bitmap and HyperLogLog families of the differential generator. Bitmaps are strings, so
// their commands also run on the string keys (and the string commands' GET, SETRANGE and APPEND
// on theirs through fkey's any-key picks); HLLs grow from sparse to dense through bulk PFADDs
// and are sometimes overwritten with corrupted HYLL strings. Both families' keys join the state
// checks, whose MGET compares their bytes after every round.

var (
	bitKeys = []string{"bm", "bm2", "bm3"}
	hllKeys = []string{"hl", "hl2", "hl3"}
)

func init() {
	keyNames = append(keyNames, bitKeys...)
	keyNames = append(keyNames, hllKeys...)
	genFamilies = append(genFamilies,
		genFamily{"bitmaps", 10, bitTable},
		genFamily{"hll", 7, hllTable})
}

var (
	// bitOffsets are the invalid ones (4294967296 is the first past proto-max-bulk-len): a valid
	// offset near the limit would make a 512 MB string on both servers.
	bitOffsets   = []string{"-1", "x", "1.5", "", "4294967296", "9223372036854775807", "#1"}
	bitRangeInts = []string{"0", "1", "2", "3", "7", "8", "9", "15", "-1", "-2", "-3", "-8", "-9", "-100", "100",
		"1000", "x", "9223372036854775807", "-9223372036854775808"}
	fieldValues = []string{"0", "1", "-1", "127", "128", "-128", "-129", "255", "256", "65535", "100",
		"9223372036854775807", "-9223372036854775808", "4611686018427387904", "x", "1.5"}
)

func (g *gen) bkey() string { return g.fkey(bitKeys) }

// bitOffset is mostly a small offset, now and then a large one or an invalid one.
func (g *gen) bitOffset() string {
	switch n := g.r.IntN(20); {
	case n < 12:
		return strconv.Itoa(g.r.IntN(200))
	case n < 17:
		return strconv.Itoa(g.r.IntN(5000))
	case n < 18:
		return strconv.Itoa(g.r.IntN(1 << 20))
	}
	return g.pick(bitOffsets)
}

func (g *gen) bitUnit() string { return g.name(g.pick([]string{"bit", "byte", "BIT", "foo"})) }

var bitTable = []genEntry{
	{8, func(g *gen) genCmd {
		return exact("setbit", g.bkey(), g.bitOffset(), g.pick([]string{"0", "1", "1", "0", "2", "x", "-1"}))
	}},
	{5, func(g *gen) genCmd { return exact("getbit", g.bkey(), g.bitOffset()) }},
	{5, (*gen).bitcount},
	{5, (*gen).bitpos},
	{4, (*gen).bitop},
	{6, func(g *gen) genCmd { return g.bitfield("bitfield") }},
	{2, func(g *gen) genCmd { return g.bitfield("bitfield_ro") }},
	{2, func(g *gen) genCmd { return exact("get", g.bkey()) }},
	{1, func(g *gen) genCmd { return exact("strlen", g.bkey()) }},
	{1, func(g *gen) genCmd { return exact("setrange", g.bkey(), g.pick(offsets), g.value()) }},
	{1, func(g *gen) genCmd { return exact("append", g.bkey(), g.value()) }},
	delOf(bitKeys),
}

// BITCOUNT key [start end [BYTE|BIT]], sometimes with a missing end or a stray argument.
func (g *gen) bitcount() genCmd {
	args := []string{"bitcount", g.bkey()}
	switch g.r.IntN(6) {
	case 0:
	case 1:
		args = append(args, g.pick(bitRangeInts)) // a syntax error unless the key is missing
	default:
		args = append(args, g.pick(bitRangeInts), g.pick(bitRangeInts))
		if g.chance(0.5) {
			args = append(args, g.bitUnit())
		}
	}
	return exact(g.junk(args)...)
}

// BITPOS key bit [start [end [BYTE|BIT]]]
func (g *gen) bitpos() genCmd {
	args := []string{"bitpos", g.bkey(), g.pick([]string{"0", "1", "0", "1", "2", "x"})}
	for n := g.r.IntN(4); n > 0 && len(args) < 5; n-- {
		args = append(args, g.pick(bitRangeInts))
	}
	if len(args) == 5 && g.chance(0.6) {
		args = append(args, g.bitUnit())
	}
	return exact(g.junk(args)...)
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]
func (g *gen) bitop() genCmd {
	op := g.pick([]string{"and", "or", "xor", "not", "not", "nand"})
	dest := g.bkey()
	if g.chance(0.5) {
		dest = g.prefix + "bm3"
	}
	n := 1 + g.r.IntN(3)
	if op == "not" && g.chance(0.9) {
		n = 1
	}
	args := []string{"bitop", g.name(op), dest}
	for range n {
		args = append(args, g.bkey())
	}
	return exact(args...)
}

// fieldType is i1..i64 or u1..u63, now and then an invalid one.
func (g *gen) fieldType() string {
	if g.chance(0.05) {
		return g.pick([]string{"u64", "i65", "i0", "x8", "I8", "u", ""})
	}
	if g.chance(0.5) {
		return "i" + strconv.Itoa(1+g.r.IntN(64))
	}
	return "u" + strconv.Itoa(1+g.r.IntN(63))
}

// BITFIELD key [GET type off] [SET type off value] [INCRBY type off incr] [OVERFLOW ...] (and
// BITFIELD_RO), one to four operations.
func (g *gen) bitfield(name string) genCmd {
	args := []string{name, g.bkey()}
	for n := 1 + g.r.IntN(4); n > 0; n-- {
		off := strconv.Itoa(g.r.IntN(300))
		if g.chance(0.3) {
			off = "#" + strconv.Itoa(g.r.IntN(40))
		} else if g.chance(0.03) {
			off = g.pick(bitOffsets)
		}
		switch g.r.IntN(8) {
		case 0, 1, 2:
			args = append(args, g.name("get"), g.fieldType(), off)
		case 3, 4:
			args = append(args, g.name("set"), g.fieldType(), off, g.fieldValue())
		case 5, 6:
			args = append(args, g.name("incrby"), g.fieldType(), off, g.fieldValue())
		default:
			args = append(args, g.name("overflow"), g.name(g.pick([]string{"wrap", "sat", "fail", "fail", "foo"})))
		}
	}
	return exact(g.junk(args)...)
}

func (g *gen) fieldValue() string {
	if g.chance(0.4) {
		return strconv.Itoa(g.r.IntN(2001) - 1000)
	}
	return g.pick(fieldValues)
}

var hllElements = []string{"a", "b", "c", "d", "1", "2", "", "x y", "\x00\xff", "foo", "bar", "baz"}

// corruptHLLs are HYLL strings Redis refuses or reads in its own way: a bad encoding, a dense
// value of the wrong size, sparse bodies that cover too few or too many registers, and a valid
// empty one with a stale cache flag. A body ending inside an XZERO is left out: Redis then reads
// the byte past the string's end, which after a write is whatever its split left there (HotKV
// reads 0; the transcripts cover the reads that agree).
var corruptHLLs = []string{
	"HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff",
	"HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff",
	"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe",
	"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x80",
	"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x3f\x7f\xbf",
	"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff",
	"HYLL", "not an hll",
}

func (g *gen) hlkey() string { return g.fkey(hllKeys) }

func (g *gen) hllElems(min, max int) []string {
	out := make([]string, min+g.r.IntN(max-min+1))
	for i := range out {
		if g.chance(0.5) {
			out[i] = g.pick(hllElements)
		} else {
			out[i] = strconv.Itoa(g.r.IntN(100000))
		}
	}
	return out
}

var hllTable = []genEntry{
	{10, func(g *gen) genCmd { return exact(cmd("pfadd", []string{g.hlkey()}, g.hllElems(0, 5))...) }},
	{2, func(g *gen) genCmd { return exact(cmd("pfadd", []string{g.hlkey()}, g.hllElems(100, 400))...) }},
	{6, func(g *gen) genCmd { return exact(cmd("pfcount", g.fkeys(hllKeys, 1, 3))...) }},
	{3, func(g *gen) genCmd {
		dest := g.hlkey()
		if g.chance(0.5) {
			dest = g.prefix + "hl3"
		}
		return exact(cmd("pfmerge", []string{dest}, g.fkeys(hllKeys, 0, 3))...)
	}},
	{3, (*gen).pfdebug},
	{2, func(g *gen) genCmd { return exact("get", g.hlkey()) }},
	{1, func(g *gen) genCmd { return exact("set", g.prefix+g.pick(hllKeys), g.pick(corruptHLLs)) }},
	{1, func(g *gen) genCmd { return exact(append([]string{"pfadd"}, g.hllElems(0, 0)...)...) }}, // arity
	delOf(hllKeys),
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key; GETREG (16384 integers) only now and then.
func (g *gen) pfdebug() genCmd {
	sub := g.pick([]string{"decode", "encoding", "encoding", "todense", "foo", "getreg"})
	if sub == "getreg" && !g.chance(0.2) {
		sub = "encoding"
	}
	args := []string{"pfdebug", g.name(sub), g.hlkey()}
	if g.chance(0.03) {
		args = append(args, "extra")
	}
	return exact(args...)
}
