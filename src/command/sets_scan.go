package command

import (
	"math"

	"github.com/hotkv/hotkv/ds/strs"
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
	opt, msg := parseMemberScanOptions(c.Args[3:])
	if msg != "" {
		c.Err(msg)
		return
	}
	start, n := len(c.Out), 0
	next := s.Scan(cursor, int(min(opt.count, math.MaxInt32)), func(m []byte) {
		if opt.pattern == nil || strs.Glob(opt.pattern, m, false) {
			c.Bulk(m)
			n++
		}
	})
	c.Out = insertScanHeader(c.Out, start, next, n)
}
