package command

import (
	"math"

	"github.com/hotkv/hotkv/src/ai/tokens"
)

// memCountLimit is the largest text MEM.WINDOW.APPEND counts tokens of itself (tiktoken runs in
// the shard at ~56 ns a byte: 64 KB is ~4 ms); a longer one must say its TOKENS.
const memCountLimit = 64 << 10

// MEM.WINDOW.APPEND key session role text [TOKENS n] [MAXTOKENS budget]: appends a message to
// session's working-memory window and drops its oldest messages until the window's tokens fit
// its budget (MAXTOKENS sets the session's budget; default the key's WINDOW). Tokens are counted
// with the key's ENCODING unless TOKENS gives them. Reply: [messages, tokens] of the window.
// Replicated with TOKENS and MAXTOKENS explicit.
func memWindowAppend(c *Ctx) {
	key, session, role, text := c.Args[1], c.Args[2], c.Args[3], c.Args[4]
	ntok, budget := -1, 0
	args := c.Args[5:]
	for j := 0; j < len(args); j += 2 {
		if j+1 >= len(args) {
			c.Err(ErrSyntax)
			return
		}
		n, ok := ParseInt(args[j+1])
		switch {
		case eqFold(args[j], "tokens"):
			if !ok || n < 0 || n > math.MaxInt32 {
				c.Err(ErrMemTokens)
				return
			}
			ntok = int(n)
		case eqFold(args[j], "maxtokens"):
			if !ok || n < 1 || n > math.MaxInt32 {
				c.Err(ErrMemWindow)
				return
			}
			budget = int(n)
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	v, ok := writeAgentMem(c, key)
	if !ok {
		return
	}
	if ntok < 0 {
		if len(text) > memCountLimit {
			c.Err(ErrMemTextLarge)
			return
		}
		ntok = tokens.Count(memEncoding(v.s.Config()), text)
	}
	w, err := v.s.Append(string(session), string(role), append([]byte(nil), text...), ntok, budget)
	if err != nil {
		memErr(c, err)
		return
	}
	c.Propagate([]byte("MEM.WINDOW.APPEND"), key, session, role, text, []byte("TOKENS"), fmtInt(int64(ntok)),
		[]byte("MAXTOKENS"), fmtInt(int64(w.Budget)))
	c.Changed(NotifyModule, "mem.window", key)
	c.Dirty(1)
	c.ArrayLen(2)
	c.Int(int64(len(w.Msgs)))
	c.Int(int64(w.Tokens))
}

// MEM.WINDOW.GET key session [MAXTOKENS n]: the newest messages of the window whose tokens add
// up to at most n (default its budget), oldest first, each [role, text, tokens]; empty when the
// session has no window.
func memWindowGet(c *Ctx) {
	max := 0
	switch {
	case len(c.Args) == 5 && eqFold(c.Args[3], "maxtokens"):
		n, ok := ParseInt(c.Args[4])
		if !ok || n < 1 || n > math.MaxInt32 {
			c.Err(ErrMemWindow)
			return
		}
		max = int(n)
	case len(c.Args) != 3:
		c.Err(ErrSyntax)
		return
	}
	v, ok := readAgentMem(c, c.Args[1])
	if !ok {
		return
	}
	w := v.s.Window(string(c.Args[2]))
	if w == nil {
		c.ArrayLen(0)
		return
	}
	msgs := w.Latest(max)
	c.ArrayLen(len(msgs))
	for _, m := range msgs {
		c.ArrayLen(3)
		c.BulkString(m.Role)
		c.Bulk(m.Text)
		c.Int(int64(m.Tokens))
	}
}

// MEM.WINDOW.CLEAR key session: 1 when the session had a window, else 0.
func memWindowClear(c *Ctx) {
	key := c.Args[1]
	v, ok := writeAgentMem(c, key)
	if !ok {
		return
	}
	if !v.s.ClearWindow(string(c.Args[2])) {
		c.Int(0)
		return
	}
	c.Propagate(c.Args...)
	c.Changed(NotifyModule, "mem.window", key)
	c.Dirty(1)
	c.Int(1)
}
