package command

import "github.com/hotkv/hotkv/ds/strs"

// The client-side caching subcommands of CLIENT (tracking.go holds the machinery).

// CLIENT TRACKING ON|OFF [REDIRECT client-id] [PREFIX prefix ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
func clientTracking(c *Ctx) {
	cl := c.Client
	var redirect uint64
	var opts uint32
	var prefixes [][]byte
	for a := NewArgs(c.Args, 3); a.More(); {
		switch {
		case a.Left() > 1 && a.Is("REDIRECT"):
			if redirect != 0 {
				c.Err(ErrTrackingOneRedirect)
				return
			}
			id := a.Int()
			if msg := a.Err(); msg != "" {
				c.Err(msg)
				return
			}
			if _, ok := c.E.clients.Load(uint64(id)); !ok || id <= 0 {
				c.Err(ErrTrackingNoRedirect)
				return
			}
			redirect = uint64(id)
		case a.Is("BCAST"):
			opts |= trackBcast
		case a.Is("OPTIN"):
			opts |= trackOptin
		case a.Is("OPTOUT"):
			opts |= trackOptout
		case a.Is("NOLOOP"):
			opts |= trackNoloop
		case a.Left() > 1 && a.Is("PREFIX"):
			prefixes = append(prefixes, a.Next())
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	switch {
	case strs.EqualFold(c.Args[2], "OFF"):
		c.E.disableTracking(cl)
		c.OK()
		return
	case !strs.EqualFold(c.Args[2], "ON"):
		c.Err(ErrSyntax)
		return
	}
	f := cl.track.flags.Load()
	switch {
	case opts&trackBcast == 0 && len(prefixes) > 0:
		c.Err(ErrTrackingPrefixBcast)
	case f&trackOn != 0 && (f&trackBcast != 0) != (opts&trackBcast != 0):
		c.Err(ErrTrackingSwitchBcast)
	case opts&trackBcast != 0 && opts&(trackOptin|trackOptout) != 0:
		c.Err(ErrTrackingBcastOpt)
	case opts&trackOptin != 0 && opts&trackOptout != 0:
		c.Err(ErrTrackingOptinOptout)
	case opts&trackOptin != 0 && f&trackOptout != 0, opts&trackOptout != 0 && f&trackOptin != 0:
		c.Err(ErrTrackingSwitchOpt)
	default:
		if opts&trackBcast != 0 {
			if msg := prefixCollision(cl.track.prefixes, prefixes); msg != "" {
				c.Err(msg)
				return
			}
		}
		c.E.enableTracking(cl, redirect, opts, prefixes)
		c.OK()
	}
}

// prefixCollision checks new BCAST prefixes against the client's and each other, as Redis's
// checkPrefixCollisionsOrReply does: one may not be a prefix of another.
func prefixCollision(have, add [][]byte) string {
	overlap := func(a, b []byte) bool {
		n := min(len(a), len(b))
		return string(a[:n]) == string(b[:n])
	}
	for i, p := range add {
		for _, h := range have {
			if overlap(p, h) && string(p) != string(h) {
				return "ERR Prefix '" + string(p) + "' overlaps with an existing prefix '" + string(h) +
					"'. Prefixes for a single client must not overlap."
			}
		}
		for j := i + 1; j < len(add); j++ {
			if overlap(p, add[j]) {
				return "ERR Prefix '" + string(p) + "' overlaps with another provided prefix '" +
					string(add[j]) + "'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

// CLIENT CACHING YES|NO
func clientCaching(c *Ctx) {
	cl := c.Client
	f := cl.track.flags.Load()
	switch {
	case f&trackOn == 0:
		c.Err(ErrCachingNotTracking)
	case strs.EqualFold(c.Args[2], "YES"):
		if f&trackOptin == 0 {
			c.Err(ErrCachingYes)
			return
		}
		cl.track.caching = true
		c.OK()
	case strs.EqualFold(c.Args[2], "NO"):
		if f&trackOptout == 0 {
			c.Err(ErrCachingNo)
			return
		}
		cl.track.caching = true
		c.OK()
	default:
		c.Err(ErrSyntax)
	}
}

// CLIENT GETREDIR
func clientGetRedir(c *Ctx) { c.Int(c.Client.redirShown()) }

// CLIENT TRACKINGINFO
func clientTrackingInfo(c *Ctx) { c.appendTrackingInfo(c.Client) }
