package command

import (
	"strconv"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/src/pubsub"
)

// Pub/sub. Subscriptions live in the engine's registry (src/pubsub); a client's side is its
// subscription sets (owner-only) and its push outbox (push.go). SUBSCRIBE and friends run on the
// connection; PUBLISH runs as a barrier that holds no shard, so that it leaves after every
// earlier command of its pipeline has run (a SET then PUBLISH of its key is seen in that order).

var pubsubCommands = []*Spec{
	{Name: "subscribe", Arity: -2, Flags: PubSub | NoScript | Loading | Stale, Scope: ScopeConn, Run: subscribe},
	{Name: "unsubscribe", Arity: -1, Flags: PubSub | NoScript | Loading | Stale, Scope: ScopeConn, Run: unsubscribe},
	{Name: "psubscribe", Arity: -2, Flags: PubSub | NoScript | Loading | Stale, Scope: ScopeConn, Run: psubscribe},
	{Name: "punsubscribe", Arity: -1, Flags: PubSub | NoScript | Loading | Stale, Scope: ScopeConn, Run: punsubscribe},
	{Name: "ssubscribe", Arity: -2, Flags: PubSub | NoScript | Loading | Stale, FirstKey: 1, LastKey: -1, Step: 1,
		Scope: ScopeConn, Run: ssubscribe},
	{Name: "sunsubscribe", Arity: -1, Flags: PubSub | NoScript | Loading | Stale, FirstKey: 1, LastKey: -1, Step: 1,
		Scope: ScopeConn, Run: sunsubscribe},
	{Name: "publish", Arity: 3, Flags: PubSub | Loading | Stale | Fast | MayReplicate, Scope: ScopeSelf, Run: publish},
	{Name: "spublish", Arity: 3, Flags: PubSub | Loading | Stale | Fast | MayReplicate, FirstKey: 1, LastKey: 1, Step: 1,
		Scope: ScopeSelf, Run: spublish},
	(&Spec{Name: "pubsub", Arity: -2}).sub(
		&Spec{Name: "pubsub|channels", Arity: -2, Flags: PubSub | Loading | Stale, Scope: ScopeConn, Run: pubsubChannels},
		&Spec{Name: "pubsub|numsub", Arity: -2, Flags: PubSub | Loading | Stale, Scope: ScopeConn, Run: pubsubNumsub},
		&Spec{Name: "pubsub|numpat", Arity: 2, Flags: PubSub | Loading | Stale, Scope: ScopeConn, Run: pubsubNumpat},
		&Spec{Name: "pubsub|shardchannels", Arity: -2, Flags: PubSub | Loading | Stale, Scope: ScopeConn, Run: pubsubShardChannels},
		&Spec{Name: "pubsub|shardnumsub", Arity: -2, Flags: PubSub | Loading | Stale, Scope: ScopeConn, Run: pubsubShardNumsub},
		&Spec{Name: "pubsub|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: pubsubHelp},
	),
}

// subState is a client's subscriptions, touched only by its connection.
type subState struct {
	names [3]map[string]struct{} // by pubsub.Kind
	sub   *pubsub.Subscriber
}

// count is what SUBSCRIBE and PSUBSCRIBE replies count (channels and patterns); shard channels
// count apart, in SSUBSCRIBE's replies.
func (st *subState) count(kind pubsub.Kind) int {
	if kind == pubsub.ShardChannel {
		return len(st.names[pubsub.ShardChannel])
	}
	return len(st.names[pubsub.Channel]) + len(st.names[pubsub.Pattern])
}

// any reports whether the client holds any subscription (RESP2 subscribed mode).
func (st *subState) any() bool {
	return len(st.names[0])+len(st.names[1])+len(st.names[2]) > 0
}

// kindNames are the reply words of each kind: subscribe, unsubscribe, message.
var kindNames = [3][3]string{
	{"subscribe", "unsubscribe", "message"},
	{"psubscribe", "punsubscribe", "pmessage"},
	{"ssubscribe", "sunsubscribe", "smessage"},
}

// SUBSCRIBE channel [channel ...]
func subscribe(c *Ctx) { subscribeGeneric(c, pubsub.Channel) }

// PSUBSCRIBE pattern [pattern ...]
func psubscribe(c *Ctx) { subscribeGeneric(c, pubsub.Pattern) }

// SSUBSCRIBE shardchannel [shardchannel ...]
func ssubscribe(c *Ctx) { subscribeGeneric(c, pubsub.ShardChannel) }

// UNSUBSCRIBE [channel ...]
func unsubscribe(c *Ctx) { unsubscribeGeneric(c, pubsub.Channel) }

// PUNSUBSCRIBE [pattern ...]
func punsubscribe(c *Ctx) { unsubscribeGeneric(c, pubsub.Pattern) }

// SUNSUBSCRIBE [shardchannel ...]
func sunsubscribe(c *Ctx) { unsubscribeGeneric(c, pubsub.ShardChannel) }

func subscribeGeneric(c *Ctx, kind pubsub.Kind) {
	cl := c.Client
	st := cl.subscriber(c.E)
	for _, name := range c.Args[1:] {
		if _, ok := st.names[kind][string(name)]; !ok {
			if st.names[kind] == nil {
				st.names[kind] = map[string]struct{}{}
			}
			st.names[kind][string(name)] = struct{}{}
			c.E.PubSub.Subscribe(kind, string(name), st.sub)
		}
		c.subscriptionReply(kindNames[kind][0], name, st.count(kind))
	}
	cl.showSubs()
}

func unsubscribeGeneric(c *Ctx, kind pubsub.Kind) {
	cl := c.Client
	st := &cl.subs
	names := c.Args[1:]
	if len(names) == 0 {
		if len(st.names[kind]) == 0 {
			c.subscriptionReply(kindNames[kind][1], nil, st.count(kind))
			return
		}
		for name := range st.names[kind] {
			names = append(names, []byte(name))
		}
	}
	for _, name := range names {
		if _, ok := st.names[kind][string(name)]; ok {
			delete(st.names[kind], string(name))
			c.E.PubSub.Unsubscribe(kind, string(name), st.sub)
		}
		c.subscriptionReply(kindNames[kind][1], name, st.count(kind))
	}
	cl.showSubs()
}

// subscriptionReply appends one (un)subscribe confirmation: a push in RESP3, an array in RESP2;
// a nil name is RESP's null (UNSUBSCRIBE with nothing to leave).
func (c *Ctx) subscriptionReply(word string, name []byte, n int) {
	c.Out = appendPushLen(c.Out, c.Proto, 3)
	c.Out = resp.AppendBulkString(c.Out, word)
	if name == nil {
		c.Out = resp.AppendNull(c.Out, c.Proto)
	} else {
		c.Out = resp.AppendBulk(c.Out, name)
	}
	c.Out = resp.AppendInt(c.Out, int64(n))
}

// appendPushLen starts a push message: '>' in RESP3, an array in RESP2.
func appendPushLen(dst []byte, proto, n int) []byte {
	if proto == 3 {
		dst = append(dst, '>')
		dst = strconv.AppendInt(dst, int64(n), 10)
		return append(dst, '\r', '\n')
	}
	return resp.AppendArrayLen(dst, n)
}

// unsubscribeAll drops every subscription of cl (RESET, and a closed connection).
func (cl *Client) unsubscribeAll(e *Engine) {
	st := &cl.subs
	for kind := range st.names {
		for name := range st.names[kind] {
			e.PubSub.Unsubscribe(pubsub.Kind(kind), name, st.sub)
		}
		st.names[kind] = nil
	}
	cl.showSubs()
}

// subscriber returns cl's subscription state, creating its registry handle on first use.
func (cl *Client) subscriber(e *Engine) *subState {
	if cl.subs.sub == nil {
		cl.subs.sub = &pubsub.Subscriber{ID: cl.ID, Deliver: cl.deliver, Wake: cl.wake}
	}
	return &cl.subs
}

// showSubs publishes the subscription counts for CLIENT LIST and INFO.
func (cl *Client) showSubs() {
	st := &cl.subs
	cl.SetPubSubCounts(len(st.names[pubsub.Channel]), len(st.names[pubsub.Pattern]),
		len(st.names[pubsub.ShardChannel]))
}

// PUBLISH channel message
func publish(c *Ctx) { publishGeneric(c, pubsub.Channel) }

// SPUBLISH shardchannel message
func spublish(c *Ctx) { publishGeneric(c, pubsub.ShardChannel) }

func publishGeneric(c *Ctx, kind pubsub.Kind) {
	n := c.E.PubSub.Publish(kind, c.Args[1], c.Args[2], &c.Client.toWake)
	if h := c.E.Hooks.Cluster; h != nil { // to the other nodes over the bus (cluster.go)
		h.Publish(kind == pubsub.ShardChannel, c.Args[1], c.Args[2])
	}
	c.takeOwnPushes()
	c.Int(int64(n))
}

// takeOwnPushes moves messages the running command delivered to its own client (RESP3 PUBLISH
// to a channel it subscribes to) in front of the command's reply, where Redis puts them.
func (c *Ctx) takeOwnPushes() {
	if c.Client.push.size.Load() > 0 {
		c.Out = c.Client.takePushes(c.Out)
	}
}

// PUBSUB CHANNELS [pattern]
func pubsubChannels(c *Ctx) { pubsubNamesGeneric(c, pubsub.Channel) }

// PUBSUB SHARDCHANNELS [pattern]
func pubsubShardChannels(c *Ctx) { pubsubNamesGeneric(c, pubsub.ShardChannel) }

func pubsubNamesGeneric(c *Ctx, kind pubsub.Kind) {
	if len(c.Args) > 3 {
		c.Errf(ErrSubSyntax, c.Args[1], "PUBSUB")
		return
	}
	var pattern []byte
	if len(c.Args) == 3 {
		pattern = c.Args[2]
	}
	names := c.E.PubSub.Names(kind, pattern)
	c.ArrayLen(len(names))
	for _, n := range names {
		c.BulkString(n)
	}
}

// PUBSUB NUMSUB [channel ...]
func pubsubNumsub(c *Ctx) { pubsubNumsubGeneric(c, pubsub.Channel) }

// PUBSUB SHARDNUMSUB [shardchannel ...]
func pubsubShardNumsub(c *Ctx) { pubsubNumsubGeneric(c, pubsub.ShardChannel) }

func pubsubNumsubGeneric(c *Ctx, kind pubsub.Kind) {
	c.ArrayLen(2 * (len(c.Args) - 2)) // an array in RESP3 too, as Redis replies it
	for _, name := range c.Args[2:] {
		c.Bulk(name)
		c.Int(int64(c.E.PubSub.Count(kind, string(name))))
	}
}

// PUBSUB NUMPAT
func pubsubNumpat(c *Ctx) { c.Int(int64(c.E.PubSub.Len(pubsub.Pattern))) }

// PUBSUB HELP
func pubsubHelp(c *Ctx) {
	lines := []string{
		"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
		"HELP",
		"    Prints this help.",
	}
	c.ArrayLen(len(lines))
	for _, l := range lines {
		c.Simple(l)
	}
}

// subscribedModeAllows reports whether a RESP2 client with subscriptions may run spec: only the
// (un)subscribe commands, PING, QUIT and RESET.
func subscribedModeAllows(spec *Spec) bool {
	switch spec.Name {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe",
		"ping", "quit", "reset":
		return true
	}
	return false
}
