package command

import (
	"fmt"
	"math"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

// setOptFlags are the options of SET and GETEX, as Redis's parseExtendedStringArgumentsOrReply
// collects them.
type setOptFlags uint16

const (
	soNX setOptFlags = 1 << iota
	soXX
	soGet
	soKeepTTL
	soPersist
	soEX
	soPX
	soEXAT
	soPXAT

	soExpire   = soEX | soPX | soEXAT | soPXAT
	soRelative = soEX | soPX
	soSeconds  = soEX | soEXAT
)

// setOpts are parsed SET/GETEX options; expire is the argument of EX/PX/EXAT/PXAT.
type setOpts struct {
	flags  setOptFlags
	expire []byte
}

// parseSetOptions parses args as SET's options (isSet) or GETEX's, with Redis's rules: NX/XX/GET/
// KEEPTTL only for SET, PERSIST only for GETEX, one kind of expiry (repeating the same one is
// allowed, the last value wins), and anything else a syntax error. It reports false on a syntax
// error.
func parseSetOptions(args [][]byte, isSet bool) (setOpts, bool) {
	var o setOpts
	for j := 0; j < len(args); j++ {
		a, hasNext := args[j], j+1 < len(args)
		switch unit := setExpireWord(a); {
		case isSet && strs.EqualFold(a, "NX") && o.flags&soXX == 0:
			o.flags |= soNX
		case isSet && strs.EqualFold(a, "XX") && o.flags&soNX == 0:
			o.flags |= soXX
		case isSet && strs.EqualFold(a, "GET"):
			o.flags |= soGet
		case isSet && strs.EqualFold(a, "KEEPTTL") && o.flags&(soPersist|soExpire) == 0:
			o.flags |= soKeepTTL
		case !isSet && strs.EqualFold(a, "PERSIST") && o.flags&(soKeepTTL|soExpire) == 0:
			o.flags |= soPersist
		case unit != 0 && hasNext && o.flags&(soKeepTTL|soPersist|soExpire&^unit) == 0:
			o.flags |= unit
			o.expire = args[j+1]
			j++
		default:
			return o, false
		}
	}
	return o, true
}

func setExpireWord(a []byte) setOptFlags {
	switch {
	case strs.EqualFold(a, "EX"):
		return soEX
	case strs.EqualFold(a, "PX"):
		return soPX
	case strs.EqualFold(a, "EXAT"):
		return soEXAT
	case strs.EqualFold(a, "PXAT"):
		return soPXAT
	}
	return 0
}

// strExpireAt converts o's expiry argument to a unix time in milliseconds with the checks of
// Redis's getExpireMillisecondsOrReply, so the same inputs fail and every time Redis accepts
// (up to int64 milliseconds) is kept exactly. It returns a wire error or "".
func strExpireAt(c *Ctx, o setOpts) (int64, string) {
	ms, ok := ParseInt(o.expire)
	if !ok {
		return 0, ErrNotInt
	}
	if ms <= 0 || (o.flags&soSeconds != 0 && ms > math.MaxInt64/1000) {
		return 0, fmt.Sprintf(ErrInvalidExpire, c.Spec.Name)
	}
	if o.flags&soSeconds != 0 {
		ms *= 1000
	}
	if o.flags&soRelative == 0 {
		return ms, ""
	}
	now := c.Now / unitMs
	if ms > math.MaxInt64-now { // Redis's sum wraps negative here and fails its check
		return 0, fmt.Sprintf(ErrInvalidExpire, c.Spec.Name)
	}
	return ms + now, ""
}

// setGeneric is Redis's setGenericCommand without the final reply: it validates the expiry,
// replies the old value for GET, and sets key unless NX/XX forbid it. It returns whether the key
// was set, and ok false when it replied an error.
func setGeneric(c *Ctx, key, val []byte, o setOpts) (done, ok bool) {
	var at int64 // unix ms
	if o.flags&soExpire != 0 {
		var msg string
		if at, msg = strExpireAt(c, o); msg != "" {
			c.Err(msg)
			return false, false
		}
	}
	if o.flags&soGet != 0 {
		if _, ok := replyStringGet(c, key); !ok {
			return false, false
		}
	}
	ks, e := c.FindIn(key)
	if (o.flags&soNX != 0 && e != nil) || (o.flags&soXX != 0 && e == nil) {
		return false, true
	}
	if e == nil {
		e = addString(c, ks, key)
	}
	storeString(c, ks, e, val)
	switch {
	case o.flags&soExpire != 0:
		ks.SetExpireMs(e, at)
	case o.flags&soKeepTTL == 0:
		ks.SetExpire(e, 0)
	}
	if o.flags&soKeepTTL == 0 { // KEEPTTL keeps the tags too (tags.go)
		untagOverwritten(c, key)
	}
	c.Changed(NotifyString, "set", key)
	c.Dirty(1)
	switch {
	case o.flags&soExpire != 0:
		c.Notify(NotifyGeneric, "expire", key)
		propagateSetPXAT(c, key, val, at)
	case o.flags&soGet != 0:
		propagateWithoutGet(c)
	}
	return true, true
}

// propagateSetPXAT replicates a SET with an expiry (SET, SETEX, PSETEX) as Redis does, as SET
// key value PXAT unix-ms: its NX|XX|GET were decided here, and a relative time would move.
func propagateSetPXAT(c *Ctx, key, val []byte, at int64) {
	if !c.E.Feed.Active() {
		return
	}
	var num [20]byte
	c.Propagate(propWord.SET, key, val, propWord.PXAT, strconv.AppendInt(num[:0], at, 10))
}

// propagateWithoutGet replicates SET … GET without its GET options (any number, any case), as
// Redis does: the replica has no reply to give.
func propagateWithoutGet(c *Ctx) {
	if !c.E.Feed.Active() {
		return
	}
	var buf [8][]byte
	args := append(buf[:0], c.Args[:3]...)
	for _, a := range c.Args[3:] {
		if !strs.EqualFold(a, "GET") {
			args = append(args, a)
		}
	}
	c.Propagate(args...)
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]
func set(c *Ctx) {
	o, ok := parseSetOptions(c.Args[3:], true)
	if !ok {
		c.Err(ErrSyntax)
		return
	}
	done, ok := setGeneric(c, c.Args[1], c.Args[2], o)
	switch {
	case !ok || o.flags&soGet != 0:
	case done:
		c.OK()
	default:
		c.Null()
	}
}

// SETNX key value
func setnx(c *Ctx) {
	done, _ := setGeneric(c, c.Args[1], c.Args[2], setOpts{flags: soNX})
	c.Int(boolInt(done)) // an integer in RESP3 too, not a boolean
}

// SETEX key seconds value
func setex(c *Ctx) { setWithExpire(c, soEX) }

// PSETEX key milliseconds value
func psetex(c *Ctx) { setWithExpire(c, soPX) }

func setWithExpire(c *Ctx, unit setOptFlags) {
	if _, ok := setGeneric(c, c.Args[1], c.Args[3], setOpts{flags: unit, expire: c.Args[2]}); ok {
		c.OK()
	}
}

// GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST]: replicated as what it did, PEXPIREAT, PERSIST or
// DEL (UNLINK under lazyfree-lazy-expire); nothing without an option.
func getex(c *Ctx) {
	key := c.Args[1]
	o, ok := parseSetOptions(c.Args[2:], false)
	if !ok {
		c.Err(ErrSyntax)
		return
	}
	e := lookupForRead(c, key)
	switch {
	case e == nil:
		c.Null()
		return
	case e.Kind != keyspace.KindString:
		c.WrongType()
		return
	}
	var at int64
	if o.flags&soExpire != 0 {
		var msg string
		if at, msg = strExpireAt(c, o); msg != "" {
			c.Err(msg)
			return
		}
	}
	c.Bulk(c.strBytes(e))
	ks := c.KS(key)
	switch {
	case o.flags&(soEXAT|soPXAT) != 0 && at <= c.Now/unitMs:
		removeExpired(c, ks, e, key) // an absolute time already past deletes the key, as Redis does
	case o.flags&soExpire != 0:
		ks.SetExpireMs(e, at)
		c.Changed(NotifyGeneric, "expire", key)
		c.Dirty(1)
		propagatePexpireat(c, key, at, nil)
	case o.flags&soPersist != 0 && e.ExpireAt() != 0:
		ks.SetExpire(e, 0)
		c.Changed(NotifyGeneric, "persist", key)
		c.Dirty(1)
		c.Propagate(propWord.PERSIST, key)
	}
}
