package command

import "github.com/hotkv/hotkv/ds/strs"

var connectionCommands = []*Spec{
	{Name: "ping", Arity: -1, Flags: Fast, Scope: ScopeConn, Run: ping},
	{Name: "echo", Arity: 2, Flags: Loading | Stale | Fast, Scope: ScopeConn, Run: echo},
	{Name: "select", Arity: 2, Flags: Loading | Stale | Fast, Scope: ScopeConn, Run: selectDB},
	{Name: "quit", Arity: -1, Flags: AllowBusy | NoAuth | NoScript | Loading | Stale | Fast, Scope: ScopeConn, Run: quit},
	{Name: "reset", Arity: 1, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy, Scope: ScopeConn, Run: reset},
	{Name: "hello", Arity: -1, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy, Scope: ScopeConn, Run: hello},
	{Name: "auth", Arity: -2, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy, Scope: ScopeConn, Run: auth},
}

// PING [message]
func ping(c *Ctx) {
	switch {
	case len(c.Args) > 2:
		c.ArityErr()
	case c.Proto == 2 && c.Client.subs.any():
		// RESP2 subscribed mode answers a two-element array, as Redis does.
		c.ArrayLen(2)
		c.BulkString("pong")
		if len(c.Args) == 2 {
			c.Bulk(c.Args[1])
		} else {
			c.BulkString("")
		}
	case len(c.Args) == 1:
		c.Out = append(c.Out, "+PONG\r\n"...)
	default:
		c.Bulk(c.Args[1])
	}
}

// ECHO message
func echo(c *Ctx) { c.Bulk(c.Args[1]) }

// SELECT index
func selectDB(c *Ctx) {
	n, ok := ParseInt(c.Args[1])
	switch {
	case !ok:
		c.Err(ErrNotInt)
	case n < 0 || n >= int64(c.E.dbCount):
		c.Err(ErrDBIndex)
	default:
		c.Client.DB = int(n)
		c.Client.dbShown.Store(int32(n))
		c.OK()
	}
}

// QUIT
func quit(c *Ctx) {
	c.OK()
	c.Client.CloseAfterReply()
}

// RESET
func reset(c *Ctx) {
	cl := c.Client
	cl.DB, cl.replyMode, cl.skipNext = 0, replyOn, false
	cl.SetProto(2)
	cl.dbShown.Store(0)
	cl.setNoEvict(false)
	cl.noTouch = false
	cl.SetName("")
	cl.setACLUser(c.E.acl.Default())
	cl.Authed = !c.E.authRequired()
	cl.unsubscribeAll(c.E)
	c.E.disableTracking(cl)
	c.E.discardTx(cl)
	c.E.stopMonitor(cl)
	c.Simple("RESET")
}

// AUTH [username] password
func auth(c *Ctx) {
	if len(c.Args) > 3 {
		c.Err(ErrSyntax)
		return
	}
	user, pass := []byte("default"), c.Args[1]
	if len(c.Args) == 3 {
		user, pass = c.Args[1], c.Args[2]
	} else if c.E.acl.Default().User().NoPass() {
		c.Err(ErrAuthNoPass)
		return
	}
	if !c.E.authenticate(c, user, pass) {
		c.Err(ErrWrongPass)
		return
	}
	c.OK()
}

// authenticate logs the client in as user (Redis's ACLAuthenticateUser): a wrong password or a
// disabled or unknown user is an ACL LOG "auth" entry.
func (e *Engine) authenticate(c *Ctx, user, pass []byte) bool {
	ent := e.acl.Authenticate(user, pass)
	if ent == nil {
		e.aclLog(c.Client, aclDeniedAuth, aclContext(c.Client), c.Spec, c.Args, 0, string(user), false)
		return false
	}
	c.Client.Authed = true
	c.Client.setACLUser(ent)
	return true
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
func hello(c *Ctx) {
	cl := c.Client
	proto := cl.Proto
	if len(c.Args) > 1 {
		v, ok := ParseInt(c.Args[1])
		if !ok {
			c.Err(ErrProtoVersion)
			return
		}
		if v < 2 || v > 3 {
			c.Err(ErrNoProto)
			return
		}
		proto = int(v)
	}
	var user, pass, name []byte
	for j := 2; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch opt := c.Args[j]; {
		case strs.EqualFold(opt, "AUTH") && more >= 2:
			user, pass = c.Args[j+1], c.Args[j+2]
			j += 2
		case strs.EqualFold(opt, "SETNAME") && more >= 1:
			name = c.Args[j+1]
			j++
		default:
			c.Errf(ErrHelloOption, opt)
			return
		}
	}
	if user != nil && !c.E.authenticate(c, user, pass) {
		c.Err(ErrWrongPass)
		return
	}
	if !cl.Authed {
		c.Err(ErrHelloNoAuth)
		return
	}
	if name != nil {
		if msg := validClientName(name); msg != "" {
			c.Err(msg)
			return
		}
		cl.SetName(string(name))
	}
	cl.SetProto(proto)
	c.Proto = proto
	c.MapLen(7)
	c.BulkString("server")
	c.BulkString("redis")
	c.BulkString("version")
	c.BulkString(RedisVersion)
	c.BulkString("proto")
	c.Int(int64(proto))
	c.BulkString("id")
	c.Int(int64(cl.ID))
	c.BulkString("mode")
	c.BulkString("standalone")
	c.BulkString("role")
	c.BulkString("master")
	c.BulkString("modules")
	c.ArrayLen(0)
}

// RedisVersion is the Redis version HotKV answers as (clients check it for feature support).
const RedisVersion = "7.0.15"

// validClientName checks a CLIENT SETNAME / HELLO SETNAME name: no spaces, newlines or other
// characters outside '!'..'~'.
func validClientName(name []byte) string {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			return ErrClientName
		}
	}
	return ""
}
