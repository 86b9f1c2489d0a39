package command

import (
	"math"
	"strconv"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/src/config"
)

// SSCAN key cursor [MATCH pattern] [COUNT count]
func sscan(c *Ctx) {
	cursor, ok := parseScanCursor(c.Args[2])
	if !ok {
		c.Err(ErrInvalidCursor)
		return
	}
	s, ok := readSet(c, c.Args[1])
	if !ok {
		return
	}
	if s == nil {
		c.Out = append(c.Out, "*2\r\n$1\r\n0\r\n*0\r\n"...)
		return
	}
	opt, msg := sscanOptions(c.Args[3:])
	if msg != "" {
		c.Err(msg)
		return
	}
	start, n := len(c.Out), 0
	next := s.Scan(cursor, int(min(opt.count, math.MaxInt32)), func(m []byte) {
		if opt.pattern == nil || config.Glob(opt.pattern, m, false) {
			c.Bulk(m)
			n++
		}
	})
	var head [64]byte
	h := resp.AppendArrayLen(head[:0], 2)
	var num [20]byte
	h = resp.AppendBulk(h, strconv.AppendUint(num[:0], next, 10))
	h = resp.AppendArrayLen(h, n)
	c.Out = sscanInsert(c.Out, start, h)
}

// sscanOptions parses SCAN's options without TYPE, which Redis accepts only for SCAN itself:
// an error in the options before a TYPE is reported as SCAN would, TYPE itself is a syntax
// error.
func sscanOptions(args [][]byte) (scanOptions, string) {
	end := len(args)
	for i := 0; i < len(args); i += 2 {
		if EqualFold(args[i], "TYPE") {
			end = i
			break
		}
	}
	opt, msg := parseScanOptions(args[:end])
	if msg == "" && end < len(args) {
		msg = ErrSyntax
	}
	return opt, msg
}

// sscanInsert inserts b into dst at position at.
func sscanInsert(dst []byte, at int, b []byte) []byte {
	dst = append(dst, b...)
	copy(dst[at+len(b):], dst[at:len(dst)-len(b)])
	copy(dst[at:], b)
	return dst
}
