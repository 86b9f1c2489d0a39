package command

import (
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
)

// SCAN walks the shards in order, one at a time, each with its keyspace's reverse-binary cursor.
// The cursor a client holds packs both: the low shardBits bits are the shard, the rest the
// cursor inside it. Cursor 0 is the first bucket of shard 0, and SCAN returns 0 only after the
// last shard's walk ends, so Redis's contract holds: a key present for the whole scan is
// returned at least once, whatever resizes happen between calls.
var scanSpec = &Spec{Name: "scan", Arity: -2, Flags: ReadOnly, Scope: ScopeSelf, Run: scan}

// scanOptions are SCAN's MATCH, COUNT and TYPE.
type scanOptions struct {
	pattern []byte // nil: every key
	count   int64
	typ     []byte // nil: every type
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
func scan(c *Ctx) {
	cursor, ok := parseScanCursor(c.Args[1])
	if !ok {
		c.Err(ErrInvalidCursor)
		return
	}
	opt, msg := parseScanOptions(c.Args[2:])
	if msg != "" {
		c.Err(msg)
		return
	}
	next, keys := c.E.scanKeys(c, cursor, &opt)
	c.ArrayLen(2)
	var buf [20]byte
	c.Bulk(strconv.AppendUint(buf[:0], next, 10))
	c.ArrayLen(len(keys))
	for _, k := range keys {
		c.BulkString(k)
	}
}

// parseScanCursor reads a cursor as Redis's strtoul-based parser does: no leading space, an
// optional sign ("-1" wraps to the largest cursor), decimal digits up to the end of the string
// (or a NUL byte, where a C string ends), at most 2^64-1. An empty string is cursor 0.
func parseScanCursor(b []byte) (uint64, bool) {
	if len(b) > 0 && isSpace(b[0]) {
		return 0, false
	}
	neg := false
	digits := b
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		neg, digits = digits[0] == '-', digits[1:]
	}
	var v uint64
	n := 0
	for ; n < len(digits) && '0' <= digits[n] && digits[n] <= '9'; n++ {
		d := uint64(digits[n] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if n == 0 {
		// No digits: strtoul consumes nothing, so only an empty string (or NUL) passes.
		return 0, len(b) == 0 || b[0] == 0
	}
	if n < len(digits) && digits[n] != 0 {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseScanOptions parses SCAN's options in Redis's order of checks: each option needs its
// value, COUNT must be a positive integer, anything else is a syntax error.
func parseScanOptions(argv [][]byte) (scanOptions, string) {
	opt := scanOptions{count: 10}
	for a := NewArgs(argv, 0); ; {
		switch {
		case !a.More():
			return opt, a.Err()
		case a.Is("COUNT"):
			opt.count = a.Int()
			a.Require(opt.count >= 1, ErrSyntax)
		case a.Is("MATCH"):
			if opt.pattern = a.Next(); len(opt.pattern) == 1 && opt.pattern[0] == '*' {
				opt.pattern = nil
			}
		case a.Is("TYPE"):
			opt.typ = a.Next()
		default:
			a.Fail(ErrSyntax)
		}
	}
}

// parseMemberScanOptions parses the options of HSCAN, SSCAN and ZSCAN: SCAN's without TYPE,
// which Redis 7.0 accepts only for SCAN. An error in the options before a TYPE is reported as
// SCAN reports it; the TYPE itself is a syntax error.
func parseMemberScanOptions(args [][]byte) (scanOptions, string) {
	for i := 0; i < len(args); i += 2 {
		if strs.EqualFold(args[i], "TYPE") {
			if opt, msg := parseScanOptions(args[:i]); msg != "" {
				return opt, msg
			}
			return scanOptions{}, ErrSyntax
		}
	}
	return parseScanOptions(args)
}

// insertScanHeader puts a SCAN-family reply's header (the next cursor, and the length n of the
// elements already appended at out[start:]) in front of those elements: their number is known
// only once the scan ran.
func insertScanHeader(out []byte, start int, next uint64, n int) []byte {
	var head [64]byte
	var num [20]byte
	h := resp.AppendArrayLen(head[:0], 2)
	h = resp.AppendBulk(h, strconv.AppendUint(num[:0], next, 10))
	h = resp.AppendArrayLen(h, n)
	out = append(out, h...)
	copy(out[start+len(h):], out[start:len(out)-len(h)])
	copy(out[start:], h)
	return out
}

// scanKeys runs the SCAN call c on its database from cursor: it visits buckets until count
// entries were seen (matching or not, as in Redis, so COUNT bounds the work) or ten times
// count buckets were visited, holding one shard at a time. It returns the next cursor and the
// keys that pass the filters.
//
// c is the running call of the shard it holds (enter, leave), so the expired keys it reclaims
// are reported to c: their DELs go to the feed while the shard is held, their "expired" events
// with c's, in request order.
func (e *Engine) scanKeys(c *Ctx, cursor uint64, opt *scanOptions) (uint64, []string) {
	db, now := c.DB, c.Now
	shards := uint64(len(e.Group.Shards))
	shard, inner := cursor&(shards-1), cursor>>e.shardBits
	buckets := opt.count * 10
	if opt.count > math.MaxInt64/10 {
		buckets = math.MaxInt64
	}
	var keys []string
	var seen int64
	for shard < shards && buckets > 0 && seen < opt.count {
		e.runInShard(c, int(shard), func(sh *pipeline.Shard) {
			ks := sh.Data.(*shardData).dbs[db]
			for {
				var expired [8][]byte
				nexp := 0
				inner = ks.Scan(inner, func(en *keyspace.Entry) {
					seen++
					switch {
					case !entryLive(en, now):
						if nexp < len(expired) {
							expired[nexp] = keyBytes(en.Key())
							nexp++
						}
					case opt.matches(en):
						keys = append(keys, strings.Clone(en.Key())) // the entry may be reused once the shard is let go
					}
				})
				for _, k := range expired[:nexp] {
					if e.expiryHeld() { // a replica leaves it for the primary's DEL, a paused server for the unpause (repl.go)
						break
					}
					ks.FindQuiet(k, now) // reclaims it through the keyspace's expiry path
				}
				buckets--
				if inner == 0 || buckets == 0 || seen >= opt.count {
					return
				}
			}
		})
		if inner == 0 {
			shard++
		}
	}
	if shard == shards {
		return 0, keys
	}
	return inner<<e.shardBits | shard, keys
}

func (opt *scanOptions) matches(en *keyspace.Entry) bool {
	if opt.typ != nil && !strs.EqualFold(opt.typ, en.Kind.String()) {
		return false
	}
	return opt.pattern == nil || strs.Glob(opt.pattern, keyBytes(en.Key()), false)
}

// keyBytes views a key as bytes without copying, for read-only use (matching, lookups); the
// bytes must never be written.
func keyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
