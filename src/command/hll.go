package command

import (
	"github.com/hotkv/hotkv/ds/hll"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

// HyperLogLogs are string values in Redis's own format (ds/hll): GET returns the bytes Redis
// would hold. PFCOUNT of one key caches the estimate in the header, a write in Redis's sense
// (the key is touched, the change counted and PFCOUNT replicated) although the command is
// flagged readonly.
var hllCommands = []*Spec{
	{Name: "pfadd", Arity: -2, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: pfadd},
	{Name: "pfcount", Arity: -2, Flags: ReadOnly | MayReplicate, FirstKey: 1, LastKey: -1, Step: 1, Run: pfcount},
	{Name: "pfmerge", Arity: -2, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 1, Run: pfmerge},
	{Name: "pfdebug", Arity: 3, Flags: Write | DenyOOM | Admin, FirstKey: 2, LastKey: 2, Step: 1, Run: pfdebug},
	{Name: "pfselftest", Arity: 1, Flags: Admin, Run: pfselftest},
}

// hllSparseLimit returns hll-sparse-max-bytes as ds/hll asks for it.
func hllSparseLimit(c *Ctx) func() int {
	return func() int { return int(min(c.E.Settings().HllSparseMaxBytes, keyspace.MaxString)) }
}

// hllOf checks that e (a live entry) holds an HLL, replying Redis's WRONGTYPE errors if not.
func hllOf(c *Ctx, e *keyspace.Entry) bool {
	switch {
	case e.Kind != keyspace.KindString:
		c.WrongType()
	case e.Packed() || !hll.Check(e.Bytes()): // an HLL is never packed (strings_packed.go)
		c.Err(ErrHLLWrongType)
	default:
		return true
	}
	return false
}

// newHLL stores an empty HLL in the new entry e.
func newHLL(e *keyspace.Entry) {
	e.Kind, e.Enc = keyspace.KindString, EncRaw
	e.SetBytes(hll.New())
}

// PFADD key [element ...]
func pfadd(c *Ctx) {
	key := c.Args[1]
	ks, e := c.FindIn(key)
	changed := 0
	if e == nil {
		e = addString(c, ks, key)
		newHLL(e)
		changed++
	} else if !hllOf(c, e) {
		return
	}
	e.Enc = EncRaw
	b, limit := e.Bytes(), hllSparseLimit(c)
	for _, ele := range c.Args[2:] {
		nb, up, ok := hll.Add(b, ele, limit)
		if !ok {
			e.SetBytes(b) // what was added before stays, unannounced, as in Redis
			c.Err(ErrHLLInvalid)
			return
		}
		b = nb
		if up {
			changed++
		}
	}
	e.SetBytes(b)
	if changed > 0 {
		hll.Invalidate(b)
		c.Changed(NotifyString, "pfadd", key)
		c.Dirty(changed)
		c.Int(1)
		return
	}
	c.Int(0)
}

// PFCOUNT key [key ...]
func pfcount(c *Ctx) {
	if len(c.Args) > 2 {
		pfcountUnion(c)
		return
	}
	key := c.Args[1]
	e := c.FindRead(key)
	if e == nil {
		c.Int(0)
		return
	}
	if !hllOf(c, e) {
		return
	}
	b := e.Bytes()
	if n, ok := hll.Cached(b); ok {
		c.Int(int64(n))
		return
	}
	n, ok := hll.Count(b)
	if !ok {
		c.Err(ErrHLLInvalid)
		return
	}
	hll.SetCached(b, n)
	e.Enc = EncRaw
	c.Touch(key)
	c.Dirty(1)
	c.Int(int64(n))
}

// pfcountUnion is PFCOUNT of several keys: the estimate of their union, changing none of them.
func pfcountUnion(c *Ctx) {
	var regs [hll.Registers]uint8
	if !hllUnion(c, c.Args[1:], &regs, nil) {
		return
	}
	c.Int(int64(hll.CountRegisters(&regs)))
}

// hllUnion raises regs to the registers of every HLL in keys (missing keys are empty). It
// replies the first error and returns false; dense, if not nil, is set when one of them is dense.
func hllUnion(c *Ctx, keys [][]byte, regs *[hll.Registers]uint8, dense *bool) bool {
	for _, key := range keys {
		e := c.FindRead(key)
		if e == nil {
			continue
		}
		if !hllOf(c, e) {
			return false
		}
		if dense != nil && hll.Encoding(e.Bytes()) == hll.Dense {
			*dense = true
		}
		if !hll.MaxInto(regs, e.Bytes()) {
			c.Err(ErrHLLInvalid)
			return false
		}
	}
	return true
}

// PFMERGE destkey [sourcekey ...]: destkey is one of the sources; it turns dense when a source
// is dense, and is written even when nothing rose.
func pfmerge(c *Ctx) {
	var regs [hll.Registers]uint8
	dense := false
	if !hllUnion(c, c.Args[1:], &regs, &dense) {
		return
	}
	key := c.Args[1]
	ks, e := c.FindIn(key)
	if e == nil {
		e = addString(c, ks, key)
		newHLL(e)
	}
	e.Enc = EncRaw
	b := e.Bytes()
	if dense {
		var ok bool
		if b, ok = hll.ToDense(b); !ok {
			c.Err(ErrHLLInvalid)
			return
		}
	}
	limit := hllSparseLimit(c)
	for i, v := range regs {
		if v == 0 {
			continue
		}
		b, _, _ = hll.SetRegister(b, i, v, limit) // the sources' check covered b's body
	}
	hll.Invalidate(b)
	e.SetBytes(b)
	c.Changed(NotifyString, "pfadd", key) // a merge is a mass PFADD, as Redis names it
	c.Dirty(1)
	c.OK()
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
func pfdebug(c *Ctx) {
	key := c.Args[2]
	e := c.Find(key)
	if e == nil {
		c.Err(ErrPFDebugNoKey)
		return
	}
	if !hllOf(c, e) {
		return
	}
	e.Enc = EncRaw
	b := e.Bytes()
	switch sub := c.Args[1]; {
	case strs.EqualFold(sub, "GETREG"), strs.EqualFold(sub, "TODENSE"):
		conv := false
		if hll.Encoding(b) == hll.Sparse {
			d, ok := hll.ToDense(b)
			if !ok {
				c.Err(ErrHLLInvalid)
				return
			}
			e.SetBytes(d)
			c.Dirty(1) // replicated, so that replicas change encoding too
			b, conv = d, true
		}
		if strs.EqualFold(sub, "TODENSE") {
			c.Int(boolInt(conv))
			return
		}
		var regs [hll.Registers]uint8
		hll.ReadRegisters(b, &regs)
		c.ArrayLen(len(regs))
		for _, v := range regs {
			c.Int(int64(v))
		}
	case strs.EqualFold(sub, "DECODE"):
		if hll.Encoding(b) != hll.Sparse {
			c.Err(ErrPFDebugNotSparse)
			return
		}
		c.Bulk(hll.AppendDecode(nil, b))
	case strs.EqualFold(sub, "ENCODING"):
		if hll.Encoding(b) == hll.Dense {
			c.Simple("dense")
		} else {
			c.Simple("sparse")
		}
	default:
		c.Errf(ErrPFDebugUnknown, sub)
	}
}

// PFSELFTEST
func pfselftest(c *Ctx) {
	if msg := hll.SelfTest(); msg != "" {
		c.Err("TESTFAILED " + msg)
		return
	}
	c.OK()
}
