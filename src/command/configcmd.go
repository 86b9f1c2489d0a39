package command

import (
	"strings"
)

var configCommands = []*Spec{
	(&Spec{Name: "config", Arity: -2, Scope: ScopeConn}).sub(
		&Spec{Name: "config|get", Arity: -3, Flags: Admin | NoScript | Loading | Stale, Scope: ScopeConn, Run: configGet},
		&Spec{Name: "config|set", Arity: -4, Flags: Admin | NoScript | Loading | Stale, Scope: ScopeConn, Run: configSet},
		&Spec{Name: "config|resetstat", Arity: 2, Flags: Admin | NoScript | Loading | Stale, Scope: ScopeConn},
		&Spec{Name: "config|rewrite", Arity: 2, Flags: Admin | NoScript | Loading | Stale, Scope: ScopeConn,
			Run: configRewrite},
		&Spec{Name: "config|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: configHelp},
	),
}

// CONFIG RESETSTAT clears every command's statistics, so its handler reaches the table, which
// lists this family: attaching it in init breaks that initialization cycle.
func init() { configCommands[0].Subs["resetstat"].Run = configResetStat }

// configHelpLines is Redis 7.0's CONFIG HELP text.
var configHelpLines = []string{
	"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET <pattern>",
	"    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>",
	"    Set the configuration <directive> to <value>.",
	"RESETSTAT",
	"    Reset statistics reported by the INFO command.",
	"REWRITE",
	"    Rewrite the configuration file.",
	"HELP",
	"    Prints this help.",
}

// Optional ConfigStore methods CONFIG uses when the store has them.
type (
	// configLocalSetter tells CONFIG SET whether the client is local (loopback or unix socket),
	// which enable-protected-configs "local" admits.
	configLocalSetter interface {
		SetFrom(pairs [][2]string, local bool) error
	}
	// configStatResetter runs the statistics resets other owners registered with the store.
	configStatResetter interface{ ResetStat() }
)

// CONFIG GET parameter [parameter ...]
func configGet(c *Ctx) {
	var pairs [][2]string
	seen := map[string]bool{} // a parameter matched by several patterns is listed once
	for _, p := range c.Args[2:] {
		if c.E.Config == nil {
			break
		}
		for _, kv := range c.E.Config.Get(string(p)) {
			if k := strings.ToLower(kv[0]); !seen[k] {
				seen[k] = true
				pairs = append(pairs, kv)
			}
		}
	}
	c.MapLen(len(pairs))
	for _, kv := range pairs {
		c.BulkString(kv[0])
		c.BulkString(kv[1])
	}
}

// CONFIG SET parameter value [parameter value ...]
func configSet(c *Ctx) {
	if len(c.Args)%2 != 0 {
		c.Err(ErrSyntax)
		return
	}
	if c.E.Config == nil {
		c.Errf(ErrConfigSetUnknown, c.Args[2])
		return
	}
	pairs := make([][2]string, 0, (len(c.Args)-2)/2)
	for i := 2; i+1 < len(c.Args); i += 2 {
		pairs = append(pairs, [2]string{string(c.Args[i]), string(c.Args[i+1])})
	}
	var err error
	if s, ok := c.E.Config.(configLocalSetter); ok {
		err = s.SetFrom(pairs, localClient(c.Client))
	} else {
		err = c.E.Config.Set(pairs)
	}
	if err != nil {
		c.Err(err.Error())
		return
	}
	c.OK()
}

// localClient reports whether cl is on a loopback or unix-socket connection (Redis's
// islocalClient, protected.go).
func localClient(cl *Client) bool { return IsLocalAddr(cl.Addr) }

// CONFIG RESETSTAT
func configResetStat(c *Ctx) {
	c.E.resetStats(c.tx != nil) // queued in a transaction: EXEC holds every shard (multi.go)
	if r, ok := c.E.Config.(configStatResetter); ok {
		r.ResetStat()
	}
	c.OK()
}

// CONFIG REWRITE
func configRewrite(c *Ctx) {
	if c.E.Config == nil {
		c.Err(ErrNoConfigFile)
		return
	}
	if err := c.E.Config.Rewrite(); err != nil {
		c.Err(err.Error())
		return
	}
	c.OK()
}

// CONFIG HELP
func configHelp(c *Ctx) { replyHelpLines(c, configHelpLines) }
