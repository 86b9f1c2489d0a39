package meta

import (
	"bytes"
	"fmt"
)

// KeySpec is one key specification of a command (the 9th field of COMMAND INFO): where a run of keys
// begins and how to find its end.
type KeySpec struct {
	Flags []string // "RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", …

	// BeginSearch is "index" (the run starts at Index), "keyword" (after the first argument equal
	// to Keyword, searching from StartFrom; a negative StartFrom searches backwards from the end)
	// or "unknown".
	BeginSearch string
	Index       int
	Keyword     string
	StartFrom   int

	// FindKeys is "range" (keys up to LastKey past the start, or counted from the end when
	// negative; Limit divides the remaining arguments), "keynum" (the argument at KeyNumIdx holds
	// the number of keys, which start FirstKey after the start) or "unknown".
	FindKeys  string
	LastKey   int
	Limit     int
	KeyNumIdx int
	FirstKey  int
	KeyStep   int
}

// Has reports whether the spec carries flag.
func (k *KeySpec) Has(flag string) bool {
	for _, f := range k.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

func parseKeySpec(v *value) (KeySpec, error) {
	var k KeySpec
	if f := v.field("flags"); f != nil {
		k.Flags = f.strs()
	}
	bs, fk := v.field("begin_search"), v.field("find_keys")
	if bs == nil || fk == nil || bs.field("type") == nil || fk.field("type") == nil {
		return k, fmt.Errorf("key spec without begin_search or find_keys")
	}
	k.BeginSearch, k.FindKeys = bs.field("type").str, fk.field("type").str
	spec, fspec := bs.field("spec"), fk.field("spec")
	num := func(m *value, key string) int {
		if m == nil || m.field(key) == nil {
			return 0
		}
		return int(m.field(key).n)
	}
	k.Index, k.StartFrom = num(spec, "index"), num(spec, "startfrom")
	if spec != nil && spec.field("keyword") != nil {
		k.Keyword = spec.field("keyword").str
	}
	k.LastKey, k.Limit, k.KeyStep = num(fspec, "lastkey"), num(fspec, "limit"), num(fspec, "keystep")
	k.KeyNumIdx, k.FirstKey = num(fspec, "keynumidx"), num(fspec, "firstkey")
	return k, nil
}

// KeyRef is a key found by Keys: its position in the arguments and the spec that found it.
type KeyRef struct {
	Pos  int
	Spec int
}

// Keys appends to dst the keys that specs find in args (args[0] is the command name), the way
// Redis's getKeysUsingKeySpecs does: specs flagged not_key are skipped, a keyword spec whose
// keyword is absent finds nothing. A spec that cannot be applied (unknown search, a bad key count,
// keys out of range, or one flagged incomplete) fails the whole search unless partial is set, in
// which case it is skipped and ok stays true.
func Keys(specs []KeySpec, args [][]byte, partial bool, dst []KeyRef) (out []KeyRef, ok bool) {
	base := len(dst)
	for j := range specs {
		var good bool
		dst, good = specKeys(&specs[j], j, args, dst)
		if !good && !partial {
			return dst[:base], false
		}
	}
	return dst, true
}

// specKeys appends the keys one spec finds; good is false when the spec cannot be applied.
func specKeys(k *KeySpec, j int, args [][]byte, dst []KeyRef) (out []KeyRef, good bool) {
	if k.Has("not_key") {
		return dst, true
	}
	first, found, good := k.begin(args)
	if !good || !found {
		return dst, good
	}
	first, last, good := k.bounds(args, first)
	if !good || last >= len(args) || last < first || first >= len(args) || k.KeyStep <= 0 {
		return dst, false
	}
	for i := first; i <= last; i += k.KeyStep {
		dst = append(dst, KeyRef{Pos: i, Spec: j})
	}
	return dst, !k.Has("incomplete")
}

// begin returns where the spec's search starts; found is false when its keyword is absent.
func (k *KeySpec) begin(args [][]byte) (first int, found, good bool) {
	switch k.BeginSearch {
	case "index":
		return k.Index, true, true
	case "keyword":
		start, end := k.StartFrom, len(args)-1
		if start <= 0 {
			start, end = len(args)+k.StartFrom, 1
		}
		for i := start; i != end; i = stepToward(i, start, end) {
			if i >= len(args) || i < 1 {
				break
			}
			if bytes.EqualFold(args[i], []byte(k.Keyword)) {
				return i + 1, true, true
			}
		}
		return 0, false, true
	}
	return 0, false, false
}

func stepToward(i, start, end int) int {
	if start <= end {
		return i + 1
	}
	return i - 1
}

// bounds returns the positions of the spec's first and last keys, given where its search began.
func (k *KeySpec) bounds(args [][]byte, begin int) (first, last int, good bool) {
	switch k.FindKeys {
	case "range":
		switch {
		case k.LastKey >= 0:
			return begin, begin + k.LastKey, true
		case k.Limit == 0:
			return begin, len(args) + k.LastKey, true
		default:
			return begin, begin + (len(args)-begin)/k.Limit + k.LastKey, true
		}
	case "keynum":
		at := begin + k.KeyNumIdx
		if at >= len(args) {
			return 0, 0, false
		}
		n, ok := parseCount(args[at])
		if !ok || n > len(args) {
			return 0, 0, false
		}
		first = begin + k.FirstKey
		return first, first + n - 1, true
	}
	return 0, 0, false
}

// parseCount parses a non-negative key count as Redis's string2ll does: decimal digits, no sign,
// no leading zeros.
func parseCount(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
