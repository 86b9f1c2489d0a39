package command

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/hotkv/hotkv/src/acl"
	"github.com/hotkv/hotkv/src/pubsub"
)

var aclCommands = []*Spec{
	(&Spec{Name: "acl", Arity: -2, Scope: ScopeConn}).sub(
		&Spec{Name: "acl|cat", Arity: -2, Flags: NoScript | Loading | Stale, Scope: ScopeConn, Run: aclCat},
		&Spec{Name: "acl|deluser", Arity: -3, Flags: aclAdmin, Scope: ScopeConn, Run: aclDelUser},
		&Spec{Name: "acl|dryrun", Arity: -4, Flags: aclAdmin, Scope: ScopeConn, Run: aclDryRun},
		&Spec{Name: "acl|genpass", Arity: -2, Flags: NoScript | Loading | Stale, Scope: ScopeConn, Run: aclGenPass},
		&Spec{Name: "acl|getuser", Arity: 3, Flags: aclAdmin, Scope: ScopeConn, Run: aclGetUser},
		&Spec{Name: "acl|list", Arity: 2, Flags: aclAdmin, Scope: ScopeConn, Run: aclList},
		&Spec{Name: "acl|load", Arity: 2, Flags: aclAdmin, Scope: ScopeConn, Run: aclLoad},
		&Spec{Name: "acl|log", Arity: -2, Flags: aclAdmin, Scope: ScopeConn, Run: aclLogCmd},
		&Spec{Name: "acl|save", Arity: 2, Flags: aclAdmin, Scope: ScopeConn, Run: aclSave},
		&Spec{Name: "acl|setuser", Arity: -3, Flags: aclAdmin, Scope: ScopeConn, Run: aclSetUser},
		&Spec{Name: "acl|users", Arity: 2, Flags: aclAdmin, Scope: ScopeConn, Run: aclUsers},
		&Spec{Name: "acl|whoami", Arity: 2, Flags: NoScript | Loading | Stale, Scope: ScopeConn, Run: aclWhoAmI},
		&Spec{Name: "acl|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: aclHelp},
	),
}

const aclAdmin = Admin | NoScript | Loading | Stale

// ACL SETUSER username [rule ...]
func aclSetUser(c *Ctx) {
	name := string(c.Args[2])
	if strings.ContainsFunc(name, func(r rune) bool { return r == 0 || r == ' ' || (r >= '\t' && r <= '\r') }) {
		c.Err(ErrACLUserSpaces)
		return
	}
	args := make([]string, 0, len(c.Args)-3)
	for _, a := range c.Args[3:] {
		args = append(args, string(a))
	}
	ops, bad, ok := acl.MergeSelectors(args)
	if !ok {
		c.Errf(ErrACLParen, args[bad])
		return
	}
	old, now, err := c.E.acl.SetUser(name, ops)
	if err != nil {
		c.Errf(ErrACLModifier, err.Error())
		return
	}
	if old != nil && channelRules(old) != channelRules(now) {
		c.E.aclKillRevokedSubscribers(c.Client, name, now)
	}
	c.OK()
}

// ACL GETUSER username
func aclGetUser(c *Ctx) {
	e := c.E.acl.Get(string(c.Args[2]))
	if e == nil {
		c.Null()
		return
	}
	u := e.User()
	c.MapLen(6)
	c.BulkString("flags")
	flags := u.Flags()
	c.SetLen(len(flags))
	for _, f := range flags {
		c.BulkString(f)
	}
	c.BulkString("passwords")
	c.ArrayLen(len(u.Passwords()))
	for _, p := range u.Passwords() {
		c.BulkString(p)
	}
	sels := u.Selectors()
	aclSelectorFields(c, sels[0])
	c.BulkString("selectors")
	c.ArrayLen(len(sels) - 1)
	for _, s := range sels[1:] {
		c.MapLen(3)
		aclSelectorFields(c, s)
	}
}

func aclSelectorFields(c *Ctx, s *acl.Selector) {
	c.BulkString("commands")
	c.BulkString(s.CommandRules())
	c.BulkString("keys")
	c.BulkString(s.KeysString())
	c.BulkString("channels")
	c.BulkString(s.ChannelsString())
}

// ACL DELUSER username [username ...]
func aclDelUser(c *Ctx) {
	names := make([]string, 0, len(c.Args)-2)
	for _, a := range c.Args[2:] {
		names = append(names, string(a))
	}
	gone, err := c.E.acl.Delete(names)
	if err != nil {
		c.Err(err.Error())
		return
	}
	c.E.aclDisconnect(c.Client, gone)
	c.Int(int64(len(gone)))
}

// ACL USERS
func aclUsers(c *Ctx) {
	names := c.E.acl.Names()
	c.ArrayLen(len(names))
	for _, n := range names {
		c.BulkString(n)
	}
}

// ACL LIST
func aclList(c *Ctx) {
	lines := c.E.acl.List()
	c.ArrayLen(len(lines))
	for _, l := range lines {
		c.BulkString(l)
	}
}

// ACL WHOAMI
func aclWhoAmI(c *Ctx) { c.BulkString(c.Client.aclEntry().Name) }

// ACL CAT [category]
func aclCat(c *Ctx) {
	if len(c.Args) > 3 {
		c.Errf(ErrSubSyntax, c.Args[1], "ACL")
		return
	}
	if len(c.Args) == 2 {
		c.ArrayLen(len(acl.Categories))
		for _, n := range acl.Categories {
			c.BulkString(n)
		}
		return
	}
	bit := acl.CategoryBit(string(c.Args[2]))
	if bit == 0 {
		c.Errf(ErrACLUnknownCat, c.Args[2])
		return
	}
	names := aclTablesOnce().cat.InCategory(bit)
	c.ArrayLen(len(names))
	for _, n := range names {
		c.BulkString(n)
	}
}

// ACL GENPASS [bits]
func aclGenPass(c *Ctx) {
	if len(c.Args) > 3 {
		c.Errf(ErrSubSyntax, c.Args[1], "ACL")
		return
	}
	bits := int64(256)
	if len(c.Args) == 3 {
		n, ok := ParseInt(c.Args[2])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		bits = n
	}
	if bits <= 0 || bits > 4096 {
		c.Err(ErrACLGenpass)
		return
	}
	chars := (bits + 3) / 4
	raw := make([]byte, (chars+1)/2)
	if _, err := rand.Read(raw); err != nil {
		panic("BUG: crypto/rand: " + err.Error())
	}
	c.BulkString(hex.EncodeToString(raw)[:chars])
}

// ACL LOG [count | RESET]
func aclLogCmd(c *Ctx) {
	if len(c.Args) > 3 {
		c.Errf(ErrSubSyntax, c.Args[1], "ACL")
		return
	}
	count := int64(10)
	if len(c.Args) == 3 {
		if strings.EqualFold(string(c.Args[2]), "reset") {
			c.E.acl.Log.Reset()
			c.OK()
			return
		}
		n, ok := ParseInt(c.Args[2])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		count = max(n, 0)
	}
	entries := c.E.acl.Log.Entries(int(min(count, 1<<30)))
	now := time.Now().UnixMilli()
	c.ArrayLen(len(entries))
	for _, en := range entries {
		c.MapLen(7)
		c.BulkString("count")
		c.Int(en.Count)
		c.BulkString("reason")
		c.BulkString(en.Reason)
		c.BulkString("context")
		c.BulkString(en.Context)
		c.BulkString("object")
		c.BulkString(en.Object)
		c.BulkString("username")
		c.BulkString(en.Username)
		c.BulkString("age-seconds")
		c.Double(float64(now-en.CTime) / 1000)
		c.BulkString("client-info")
		c.BulkString(en.ClientInfo)
	}
}

// ACL DRYRUN username command [arg ...]
func aclDryRun(c *Ctx) {
	e := c.E.acl.Get(string(c.Args[2]))
	if e == nil {
		c.Errf(ErrACLDryrunUser, c.Args[2])
		return
	}
	argv := c.Args[3:]
	spec := lookup(argv[0])
	if spec != nil && spec.Subs != nil && len(argv) > 1 {
		spec = lookupIn(spec.Subs, argv[1])
	}
	if spec == nil {
		c.Errf(ErrACLDryrunCmd, argv[0])
		return
	}
	if !arityOK(spec, len(argv)) {
		c.Errf(ErrArity, spec.Name)
		return
	}
	res, pos, _ := aclCheck(e.User(), spec, argv, nil)
	switch res {
	case aclOK:
		c.OK()
	case aclDeniedKey:
		c.BulkString(fmt.Sprintf("This user has no permissions to access the '%s' key", argv[pos]))
	case aclDeniedChannel:
		c.BulkString(fmt.Sprintf("This user has no permissions to access the '%s' channel", argv[pos]))
	default:
		c.BulkString(fmt.Sprintf("This user has no permissions to run the '%s' command", spec.Name))
	}
}

// ACL SAVE
func aclSave(c *Ctx) {
	path := c.E.aclFile()
	if path == "" {
		c.Err(ErrACLNoFile)
		return
	}
	if err := c.E.acl.Save(path); err != nil {
		slog.Warn("ACL SAVE failed", "err", err)
		c.Err(ErrACLSave)
		return
	}
	c.OK()
}

// ACL LOAD
func aclLoad(c *Ctx) {
	path := c.E.aclFile()
	if path == "" {
		c.Err(ErrACLNoFile)
		return
	}
	gone, msg := c.E.acl.Load(path)
	if msg != "" {
		c.Err("ERR " + msg)
		return
	}
	c.E.aclDisconnect(c.Client, gone)
	c.OK()
}

// aclFile returns the aclfile path ("" when unset), relative ones taken from dir as Redis,
// which changes into dir while reading its configuration, does.
func (e *Engine) aclFile() string {
	p := configValue(e, "aclfile")
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(configValue(e, "dir"), p)
}

func configValue(e *Engine, name string) string {
	if e.Config == nil {
		return ""
	}
	for _, kv := range e.Config.Get(name) {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}

// aclDisconnect closes the connections of deleted users; the caller's own one closes once its
// reply is written.
func (e *Engine) aclDisconnect(self *Client, gone []*acl.Entry) {
	if len(gone) == 0 {
		return
	}
	e.EachClient(func(cl *Client) {
		for _, g := range gone {
			if cl.aclEntry() == g {
				if cl == self {
					cl.CloseAfterReply()
				} else {
					cl.Kill()
				}
				return
			}
		}
	})
}

// aclKillRevokedSubscribers closes the pub/sub clients of a user whose channel rules changed
// and no longer allow one of their subscriptions (Redis's ACLKillPubsubClientsIfNeeded). The
// subscriptions belong to each connection's goroutine: the caller's own are checked at once,
// every other client is asked to check them itself (aclRecheck, then Wake), before it writes
// anything more.
func (e *Engine) aclKillRevokedSubscribers(self *Client, name string, u *acl.User) {
	for _, s := range u.Selectors() {
		if s.AllChannels() {
			return
		}
	}
	e.EachClient(func(cl *Client) {
		if ent := cl.aclEntry(); ent == nil || ent.Name != name || !cl.inPubSub() {
			return
		}
		if cl == self {
			if !subsAllowed(u, &cl.subs) {
				cl.CloseAfterReply()
			}
			return
		}
		cl.aclRecheck.Store(true)
		if cl.Wake != nil {
			cl.Wake()
		}
	})
}

// aclRecheckSubs runs on cl's own goroutine: it closes cl when its user no longer allows one
// of its subscriptions.
func (e *Engine) aclRecheckSubs(cl *Client) {
	cl.aclRecheck.Store(false)
	if !subsAllowed(cl.aclEntry().User(), &cl.subs) {
		cl.Kill()
	}
}

// subsAllowed reports whether u allows every subscription of st: each channel and shard channel
// matched by some selector's patterns, each pattern equal to one of them (Redis's
// ACLUserCheckChannelPerm).
func subsAllowed(u *acl.User, st *subState) bool {
	if u.Unrestricted() {
		return true
	}
	for kind := range st.names {
		for name := range st.names[kind] {
			ok := false
			for _, s := range u.Selectors() {
				if s.AllowsChannel([]byte(name), pubsub.Kind(kind) == pubsub.Pattern) {
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
		}
	}
	return true
}

// channelRules is a user's channel permissions, selector by selector.
func channelRules(u *acl.User) string {
	var b strings.Builder
	for _, s := range u.Selectors() {
		b.WriteString(s.ChannelsString() + "|")
	}
	return b.String()
}

// applyRequirePass gives the default user requirepass's password when requirepass changed
// (CONFIG SET requirepass, the config file), as Redis's ACLUpdateDefaultUserPassword: other
// settings changing leave rules set by ACL SETUSER default alone.
func (e *Engine) applyRequirePass(pass string) {
	if old := e.aclPass.Load(); (old == nil && pass == "") || (old != nil && *old == pass) {
		return
	}
	e.aclPass.Store(&pass)
	e.acl.SetDefaultPassword(pass)
}

// InitACL loads the users at startup as Redis's ACLLoadUsersAtStartup: the config file's user
// lines (each on a fresh user, or the reset default one), then the aclfile; both at once is an
// error, as is any bad rule.
func (e *Engine) InitACL(lines [][]string) error {
	path := e.aclFile()
	if path != "" && len(lines) > 0 {
		return errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	seen := map[string]bool{}
	for _, l := range lines {
		name := l[0]
		if seen[name] {
			return fmt.Errorf("Error in user declaration '%s': %s", name, acl.ErrDuplicate)
		}
		seen[name] = true
		ops, bad, ok := acl.MergeSelectors(l[1:])
		if !ok {
			return fmt.Errorf("Error in user declaration '%s': Unmatched parenthesis in acl selector starting at '%s'.", name, l[1+bad])
		}
		if name == "default" {
			ops = append([]string{"reset"}, ops...)
		}
		if _, _, err := e.acl.SetUser(name, ops); err != nil {
			var re *acl.RuleError
			errors.As(err, &re)
			return fmt.Errorf("Error in user declaration '%s': %s", name, re.Err)
		}
	}
	if path != "" {
		if _, msg := e.acl.Load(path); msg != "" {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: %s", msg)
		}
	}
	return nil
}

// ACLUserLines returns the users as "user <name> <rules>" lines, sorted by name, for CONFIG
// REWRITE.
func (e *Engine) ACLUserLines() []string { return e.acl.List() }

// SetACLLog applies acllog-max-len and acl-pubsub-default (allchannels: true).
func (e *Engine) SetACLLog(maxLen int64, pubsubAll bool) {
	e.acl.Log.SetMax(maxLen)
	e.acl.SetPubsubDefault(pubsubAll)
}

// ACL HELP
func aclHelp(c *Ctx) { replyHelpLines(c, aclHelpLines) }

var aclHelpLines = []string{
	"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
	"HELP",
	"    Prints this help.",
}
