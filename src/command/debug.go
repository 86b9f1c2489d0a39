package command

import (
	"bytes"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
)

// DEBUG, behind enable-debug-command (no, the default, as Redis 7.0; yes; local). The
// subcommands Redis's tools and test suites use are served as far as they apply to HotKV; the
// ones that crash, leak or poke at Redis's allocator and C structures are not (they answer
// Redis's unknown-subcommand error).

// debugKeys declares the keys of DEBUG OBJECT, DIGEST-VALUE, LISTPACK, QUICKLIST and
// HTSTATS-KEY so that they run holding their shards; the others run on the connection as a
// barrier that locks nothing.
func debugKeys(args [][]byte, dst []int) []int {
	switch {
	case len(args) < 3:
	case strs.EqualFold(args[1], "DIGEST-VALUE"):
		for i := 2; i < len(args); i++ {
			dst = append(dst, i)
		}
	case len(args) == 3 && (strs.EqualFold(args[1], "OBJECT") || strs.EqualFold(args[1], "LISTPACK") ||
		strs.EqualFold(args[1], "HTSTATS-KEY")),
		(len(args) == 3 || len(args) == 4) && strs.EqualFold(args[1], "QUICKLIST"):
		dst = append(dst, 2)
	}
	return dst
}

// DEBUG subcommand [arg ...]
func debugCmd(c *Ctx) {
	if !c.E.debugAllowed(c.Client) {
		c.Err(ErrDebugDisabled)
		return
	}
	sub, n := c.Args[1], len(c.Args)
	is := func(name string, argc int) bool {
		return (argc < 0 && n >= -argc || n == argc) && strs.EqualFold(sub, name)
	}
	switch {
	case is("HELP", 2):
		replyHelpLines(c, debugHelpLines)
	case is("OBJECT", 3):
		debugObject(c) // server.go
	case is("SLEEP", 3):
		debugSleep(c)
	case strs.EqualFold(sub, "RELOAD"):
		debugReload(c) // persist_cmds.go
	case is("DIGEST", 2):
		debugDigest(c) // debug_digest.go
	case is("DIGEST-VALUE", -2):
		debugDigestValue(c)
	case is("PROTOCOL", 3):
		debugProtocol(c, c.Args[2])
	case is("SET-ACTIVE-EXPIRE", 3):
		n, _ := strs.ParseInt(c.Args[2]) // atoi, as Redis
		c.E.lat.noActiveExpire.Store(n == 0)
		c.OK()
	case is("QUICKLIST-PACKED-THRESHOLD", 3):
		debugPackedThreshold(c)
	case is("STRINGMATCH-TEST", 2):
		c.Simple("Apparently Redis did not crash: test passed")
	case is("CHANGE-REPL-ID", 2):
		c.E.info.changeReplID()
		c.OK()
	case is("ERROR", 3):
		c.Err(string(c.Args[2]))
	case is("LOG", 3):
		slog.Warn("DEBUG LOG: " + string(c.Args[2]))
		c.OK()
	case is("LISTPACK", 3):
		debugEncodingDump(c, "listpack", "Listpack structure printed on stdout", ErrDebugNotListpack)
	case is("QUICKLIST", 3), is("QUICKLIST", 4):
		debugEncodingDump(c, "quicklist", "Quicklist structure printed on stdout", ErrDebugNotQuicklist)
	case is("HTSTATS-KEY", 3):
		debugHTStatsKey(c)
	case strs.EqualFold(sub, "POPULATE") && n >= 3 && n <= 5:
		debugPopulate(c)
	default:
		c.Errf(ErrSubSyntax, sub, "DEBUG")
	}
}

// debugProtocol is DEBUG PROTOCOL type: Redis's test values of every RESP3 type, and what a
// RESP2 client gets for them.
func debugProtocol(c *Ctx, typ []byte) {
	name := string(strs.AppendLower(nil, typ))
	switch name {
	case "string":
		c.BulkString("Hello World")
	case "integer":
		c.Int(12345)
	case "double":
		c.Double(3.141)
	case "bignum":
		c.Out = resp.AppendBigNumber(c.Out, c.Proto, "1234567999999999999999999999999999999")
	case "null":
		c.Out = resp.AppendNull(c.Out, c.Proto)
	case "array", "set":
		if name == "set" {
			c.Out = resp.AppendSetLen(c.Out, c.Proto, 3)
		} else {
			c.ArrayLen(3)
		}
		for i := range 3 {
			c.Int(int64(i))
		}
	case "map":
		c.MapLen(3)
		for i := range 3 {
			c.Int(int64(i))
			c.Out = resp.AppendBool(c.Out, c.Proto, i == 1)
		}
	case "attrib":
		if c.Proto == 3 {
			c.Out = resp.AppendAttrLen(c.Out, 1)
			c.BulkString("key-popularity")
			c.ArrayLen(2)
			c.BulkString("key:123")
			c.Int(90)
		}
		c.BulkString("Some real reply following the attribute")
	case "push":
		if c.Proto != 3 {
			c.Err(ErrDebugPushResp2)
			return
		}
		c.Out = resp.AppendPushLen(c.Out, 3, 2)
		c.BulkString("server-cpu-usage")
		c.Int(42)
		c.BulkString("Some real reply following the push reply")
	case "verbatim":
		c.Verbatim([]byte("This is a verbatim\nstring"))
	case "true", "false":
		c.Out = resp.AppendBool(c.Out, c.Proto, name == "true")
	default:
		c.Err(ErrDebugProtocolType)
	}
}

// debugPackedThreshold is DEBUG QUICKLIST-PACKED-THRESHOLD size: HotKV's lists have no plain
// nodes, so the size is only validated as Redis validates it (a memory value, at most 4 GB).
func debugPackedThreshold(c *Ctx) {
	n, ok := parseMemory(c.Args[2])
	if !ok || n < 0 || n > 1<<32 {
		c.Err(ErrDebugPackedThreshold)
		return
	}
	c.OK()
}

// parseMemory reads a memory value as Redis's memtoull: digits with an optional unit (b, k, kb,
// m, mb, g, gb, case-insensitive).
func parseMemory(b []byte) (int64, bool) {
	units := []struct {
		suffix string
		mul    int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}}
	s := string(strs.AppendLower(nil, b))
	mul := int64(1)
	for _, u := range units {
		if len(s) > len(u.suffix) && s[len(s)-len(u.suffix):] == u.suffix {
			s, mul = s[:len(s)-len(u.suffix)], u.mul
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil || int64(n) > math.MaxInt64/mul {
		return 0, false
	}
	return int64(n) * mul, true
}

// debugEncodingDump answers DEBUG LISTPACK/QUICKLIST key: Redis prints the encoding's
// internals on its stdout; HotKV logs the key's encoding and length instead.
func debugEncodingDump(c *Ctx, enc, done, notErr string) {
	key := c.Args[2]
	e := c.KS(key).FindQuiet(key, c.Now)
	if e == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if valueEncoding(e) != enc {
		c.Err(notErr)
		return
	}
	slog.Info("DEBUG "+enc, "key", string(key), "kind", e.Kind.String())
	c.Simple(done)
}

// debugHTStatsKey is DEBUG HTSTATS-KEY key, for values in their hashtable encoding: HotKV's own
// tables' figures under Redis's headings.
func debugHTStatsKey(c *Ctx) {
	key := c.Args[2]
	e := c.KS(key).FindQuiet(key, c.Now)
	if e == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if valueEncoding(e) != "hashtable" {
		c.Err(ErrDebugNotHashtable)
		return
	}
	n := valueLen(e)
	size := 4
	for size < n {
		size *= 2
	}
	c.Verbatim([]byte("[Dictionary HT]\nHash table 0 stats (main hash table):\n table size: " +
		strconv.Itoa(size) + "\n number of elements: " + strconv.Itoa(n) + "\n"))
}

var debugHelpLines = []string{
	"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANGE-REPL-ID",
	"    Change the replication IDs of the instance.",
	"    Dangerous: should be used only for testing the replication subsystem.",
	"DIGEST",
	"    Output a hex signature representing the current DB content.",
	"DIGEST-VALUE <key> [<key> ...]",
	"    Output a hex signature of the values of all the specified keys.",
	"ERROR <string>",
	"    Return a Redis protocol error with <string> as message. Useful for clients",
	"    unit tests to simulate Redis errors.",
	"LOG <message>",
	"    Write <message> to the server log.",
	"HTSTATS-KEY <key>",
	"    Like HTSTATS but for the hash table stored at <key>'s value.",
	"OBJECT <key>",
	"    Show low level info about `key` and associated value.",
	"POPULATE <count> [<prefix>] [<size>]",
	"    Create <count> string keys named key:<num>. If <prefix> is specified then",
	"    it is used instead of the 'key' prefix. These are not propagated to",
	"    replicas. Cluster slots are not respected so keys not belonging to the",
	"    current node can be created in cluster mode.",
	"PROTOCOL <type>",
	"    Reply with a test value of the specified type. <type> can be: string,",
	"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
	"    true, false.",
	"RELOAD [option ...]",
	"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
	"    * MERGE: conflicting keys will be loaded from RDB.",
	"    * NOFLUSH: the existing database will not be removed before load, but",
	"      conflicting keys will generate an exception and kill the server.",
	"    * NOSAVE: the database will be loaded from an existing RDB file.",
	"    Examples:",
	"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
	"      the database.",
	"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
	"      existing RDB file.",
	"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
	"      file to the database.",
	"SET-ACTIVE-EXPIRE <0|1>",
	"    Setting it to 0 disables expiring keys in background when they are not",
	"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
	"    default.",
	"QUICKLIST-PACKED-THRESHOLD <size>",
	"    Sets the threshold for elements to be inserted as plain vs packed nodes",
	"    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
	"SLEEP <seconds>",
	"    Stop the server for <seconds>. Decimals allowed.",
	"STRINGMATCH-TEST",
	"    Run a fuzz tester against the stringmatchlen() function.",
	"LISTPACK <key>",
	"    Show low level info about the listpack encoding of <key>.",
	"QUICKLIST <key> [<0|1>]",
	"    Show low level info about the quicklist encoding of <key>.",
	"    The optional argument (0 by default) sets the level of detail",
	"HELP",
	"    Prints this help.",
}

// debugAllowed applies enable-debug-command: "no" refuses DEBUG, "local" admits only loopback
// and unix-socket connections. Without a configuration store (tests) DEBUG is allowed.
func (e *Engine) debugAllowed(cl *Client) bool {
	if e.Config == nil {
		return true
	}
	mode := "no"
	if kv := e.Config.Get("enable-debug-command"); len(kv) == 1 {
		mode = kv[0][1]
	}
	switch mode {
	case "yes":
		return true
	case "local":
		return IsLocalAddr(cl.Addr)
	}
	return false
}

// DEBUG SLEEP seconds: sleeps this connection only (Redis blocks its whole server). Like
// Redis's strtod, a malformed number reads as its numeric prefix, or 0.
func debugSleep(c *Ctx) {
	secs := leadingFloat(c.Args[2])
	if secs > 0 {
		time.Sleep(time.Duration(min(secs*1e9, math.MaxInt64)))
	}
	c.OK()
}

// leadingFloat parses the longest prefix of b that is a decimal float, or returns 0. Only the
// first bytes are tried: no meaningful duration needs more.
func leadingFloat(b []byte) float64 {
	b = b[:min(len(b), 64)]
	for end := len(b); end > 0; end-- {
		if f, err := strconv.ParseFloat(string(b[:end]), 64); err == nil {
			return f
		}
	}
	return 0
}

// DEBUG POPULATE count [prefix] [size]: count string keys prefix:N (prefix "key") holding
// "value:N", or with size that text in size bytes, zero-padded or cut; a key that exists is left
// as it is. As Redis's: the name is formatted into 128 bytes (a longer one is cut), a prefix ends
// at its first NUL, and nothing is propagated or counted as a change.
func debugPopulate(c *Ctx) {
	count, ok := debugPositive(c.Args[2])
	if !ok {
		c.Err(ErrPositive)
		return
	}
	prefix := []byte("key")
	if len(c.Args) >= 4 {
		prefix = c.Args[3]
		if i := bytes.IndexByte(prefix, 0); i >= 0 {
			prefix = prefix[:i]
		}
	}
	var size int64
	if len(c.Args) == 5 {
		if size, ok = debugPositive(c.Args[4]); !ok {
			c.Err(ErrPositive)
			return
		}
	}
	e := c.E
	shards := make([][]int64, len(e.Group.Shards))
	const chunk = 4096
	var key, val []byte
	name := func(j int64) []byte {
		key = strconv.AppendInt(append(append(key[:0], prefix...), ':'), j, 10)
		return key[:min(len(key), 127)]
	}
	for from := int64(0); from < count; from += chunk {
		for j := from; j < min(count, from+chunk); j++ {
			i := e.shardOf(name(j))
			shards[i] = append(shards[i], j)
		}
		for i, js := range shards {
			if len(js) == 0 {
				continue
			}
			e.Group.Do(i, func(*pipeline.Shard) {
				d := e.data(int32(i))
				ks := d.dbs[c.DB]
				now := time.Now().UnixNano()
				for _, j := range js {
					k := name(j)
					if ks.FindQuiet(k, now) != nil {
						continue
					}
					val = strconv.AppendInt(append(val[:0], "value:"...), j, 10)
					v := val
					if size > 0 {
						v = make([]byte, size)
						copy(v, val)
					} else {
						v = append([]byte(nil), val...)
					}
					en := ks.Add(append([]byte(nil), k...))
					en.Access = uint32(now / 1e9)
					storeOwnedString(e, ks, en, v, &d.ctx.packed)
				}
				e.commitBackgroundLocked(d) // the DELs of expired keys it met
			})
			shards[i] = js[:0]
		}
	}
	c.OK()
}

// debugPositive parses a count as Redis's getPositiveLongFromObjectOrReply: an integer >= 0.
func debugPositive(b []byte) (int64, bool) {
	n, ok := strs.ParseInt(b)
	return n, ok && n >= 0
}
