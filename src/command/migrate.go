package command

// MIGRATE (issue 17 item 4), as Redis 7.0.15's migrateCommand in cluster.c: the keys are DUMPed
// and sent as RESTORE key ttl payload [REPLACE] (RESTORE-ASKING in cluster mode, so that the
// target serves it in its importing slot), after AUTH/AUTH2 and a SELECT when the cached connection's
// database differs; each acknowledged key is deleted unless COPY, raising "del" and replicated
// as one DEL of those keys.
//
// MIGRATE is a barrier (ScopeSelf) that runs in three steps, so that execute does no network
// I/O (DESIGN invariant 6):
//
//  1. holding each key's shard in turn, look the key up (a read, as lookupKeyRead) and take its
//     payload and remaining TTL;
//  2. holding nothing, write the commands to the target and read its replies, on the
//     connection's goroutine (mayBlock sends the batch off the netpoll poller);
//  3. holding the acknowledged keys' shards together, delete them.
//
// Between steps other clients may change the keys: a key deleted meanwhile is not deleted again
// (nor replicated), and a key whose value was rewritten meanwhile (its payload differs) is kept,
// so no write MIGRATE did not send is lost; its reply is still +OK. In Redis the three steps
// are one, since it blocks the whole server for the transfer. Inside EXEC, which holds every
// shard already, the steps run under those tokens, blocking their shards for the transfer, as
// Redis blocks its whole server.

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
)

var migrateCommands = []*Spec{
	{Name: "migrate", Arity: -6, Flags: Write | MovableKeys, FirstKey: 3, LastKey: 3, Step: 1,
		Scope: ScopeSelf, Keys: migrateKeys, Run: migrateCmd},
}

// Redis's migrate socket cache: MIGRATE_SOCKET_CACHE_ITEMS and MIGRATE_SOCKET_CACHE_TTL.
const (
	migrateCacheItems = 64
	migrateCacheTTL   = 10 * time.Second
	migrateChunk      = 64 * 1024 // written to the target in chunks of this size, each with the timeout
	migrateLineMax    = 1024      // the reply line buffers of migrateCommand (a longer line is cut)
)

// migrateOpts are MIGRATE's parsed arguments.
type migrateOpts struct {
	copy, replace bool
	user, pass    []byte // pass nil: no AUTH
	keys          [][]byte
	timeout       time.Duration
	db            int64
	cluster       bool // cluster mode: RESTORE-ASKING, which the target serves in its importing slot
}

// parseMigrate reads the options after the timeout, then the timeout and the database, in
// migrateCommand's order of checks; "" when they are valid.
func parseMigrate(args [][]byte) (migrateOpts, string) {
	o := migrateOpts{keys: args[3:4]}
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch a := args[j]; {
		case strs.EqualFold(a, "COPY"):
			o.copy = true
		case strs.EqualFold(a, "REPLACE"):
			o.replace = true
		case strs.EqualFold(a, "AUTH"):
			if more < 1 {
				return o, ErrSyntax
			}
			j++
			o.pass = args[j]
		case strs.EqualFold(a, "AUTH2"):
			if more < 2 {
				return o, ErrSyntax
			}
			o.user, o.pass = args[j+1], args[j+2]
			j += 2
		case strs.EqualFold(a, "KEYS"):
			if len(args[3]) != 0 {
				return o, ErrMigrateKeysArg
			}
			o.keys = args[j+1:]
			j = len(args)
		default:
			return o, ErrSyntax
		}
	}
	timeout, ok1 := ParseInt(args[5])
	db, ok2 := ParseInt(args[4])
	if !ok1 || !ok2 {
		return o, ErrNotInt
	}
	if timeout <= 0 {
		timeout = 1000
	}
	o.timeout = time.Duration(min(timeout, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond
	o.db = db
	return o, ""
}

// migrateKeys is MIGRATE's key positions, as Redis's migrateGetKeys: the key argument, or every
// argument after KEYS (none when the key argument is not empty then).
func migrateKeys(args [][]byte, dst []int) []int {
	skip := map[string]int{"copy": 0, "replace": 0, "auth": 1, "auth2": 2}
	for i := 6; i < len(args); i++ {
		if strs.EqualFold(args[i], "KEYS") {
			if len(args[3]) > 0 {
				return dst
			}
			for k := i + 1; k < len(args); k++ {
				dst = append(dst, k)
			}
			return dst
		}
		i += skip[string(strs.AppendLower(nil, args[i]))]
	}
	return append(dst, 3)
}

// migrateItem is one key found in step 1.
type migrateItem struct {
	key     []byte
	ttl     int64 // milliseconds left, 0: none
	payload []byte
	acked   bool // the target answered its RESTORE without an error
}

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
// [AUTH2 username password] [KEYS key [key ...]]
func migrateCmd(c *Ctx) {
	o, msg := parseMigrate(c.Args)
	o.cluster = c.E.Hooks.Cluster != nil
	if msg != "" {
		c.Err(msg)
		return
	}
	items := migrateCollect(c, o.keys)
	if len(items) == 0 {
		c.Simple("NOKEY")
		return
	}
	name := string(c.Args[1]) + ":" + string(c.Args[2])
	if msg := migrateSend(name, c.Args[1], c.Args[2], &o, items); msg != "" {
		c.Err(msg)
	} else {
		c.OK()
	}
	if !o.copy {
		migrateDelete(c, items)
	}
}

// migrateCollect is step 1: the payload and TTL of every live key, in argument order, taken
// holding one shard at a time, ascending.
func migrateCollect(c *Ctx, keys [][]byte) []migrateItem {
	found := make([]*migrateItem, len(keys))
	shards := make([]int32, len(keys))
	for i, k := range keys {
		shards[i] = c.E.shardOf(k)
	}
	order := slices.Clone(shards)
	slices.Sort(order)
	nowMs := c.Now / 1e6
	for _, id := range slices.Compact(order) {
		c.E.runInShard(c, int(id), func(*pipeline.Shard) {
			for i, k := range keys {
				if shards[i] != id {
					continue
				}
				ks, _ := c.lookup(k)
				en := c.FindRead(k)
				if en == nil {
					continue
				}
				it := &migrateItem{key: k, payload: c.E.dumpPayload(en, c.Now)}
				if en.ExpireAt() != 0 {
					it.ttl = max(ks.ExpireMs(en)-nowMs, 1)
				}
				found[i] = it
			}
		})
	}
	var items []migrateItem
	for _, it := range found {
		if it != nil {
			items = append(items, *it)
		}
	}
	return items
}

// migrateDelete is step 3: the acknowledged keys still present are deleted holding their
// shards together, each a "del" event, replicated as one DEL of them all.
func migrateDelete(c *Ctx, items []migrateItem) {
	var shards []int32
	for i := range items {
		if items[i].acked {
			shards = append(shards, c.E.shardOf(items[i].key))
		}
	}
	if len(shards) == 0 {
		return
	}
	slices.Sort(shards)
	shards = slices.Compact(shards)
	if c.tx != nil { // inside EXEC, which holds every shard (multi.go)
		migrateDeleteLocked(c, items)
		return
	}
	c.E.Group.Lock(shards)
	defer c.E.Group.Unlock(shards)
	c.E.enter(shards, false, c)
	defer c.E.leave(shards, false, c)
	migrateDeleteLocked(c, items)
	c.E.commit(c, c.slot)
}

func migrateDeleteLocked(c *Ctx, items []migrateItem) {
	del := [][]byte{propWord.DEL}
	for i := range items {
		k := items[i].key
		if !items[i].acked {
			continue
		}
		// A key another client rewrote since its payload was taken keeps its new value (the
		// target holds the old one): deleting it would lose a write that MIGRATE never sent.
		ks := c.KS(k)
		if en := ks.FindQuiet(k, c.Now); en == nil || !bytes.Equal(c.E.dumpPayload(en, c.Now), items[i].payload) {
			continue
		}
		if ks.Delete(k, c.Now) {
			c.Changed(NotifyGeneric, "del", k)
			c.Dirty(1)
			del = append(del, k)
		}
	}
	if len(del) > 1 {
		c.Propagate(del...)
	} else {
		c.PropagateNothing()
	}
}

// migrateSend is step 2: it sends the items to the target on a cached connection (or a new
// one), marks the acknowledged ones, and returns the reply's error text, or "" for +OK. As
// migrateCommand, a socket error is retried once on a fresh connection unless it was a timeout
// or a reply had already arrived.
func migrateSend(name string, host, port []byte, o *migrateOpts, items []migrateItem) string {
	for retry := true; ; retry = false {
		cs, err := migrateSockets.get(name, host, port, o.timeout)
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Redis's non-blocking connect succeeds at once on loopback and the refusal shows
			// at the first write (so a closed port is "writing" there, after its retry).
			if retry {
				continue
			}
			return ErrMigrateWrite
		}
		if err != nil {
			return ErrMigrateConnect // timed out, or the host did not resolve
		}
		write, replies, timedOut, err := cs.exchange(o, items)
		if err == nil {
			migrateSockets.put(cs)
			return replies
		}
		cs.nc.Close()      // migrateCloseSocket
		if replies != "" { // the target's error came before the socket's
			return replies
		}
		if retry && !timedOut && !anyAcked(items) { // nothing was processed: try a fresh socket
			continue
		}
		if write {
			return ErrMigrateWrite
		}
		return ErrMigrateRead
	}
}

// anyAcked reports whether some RESTORE was acknowledged (no retry then: keys moved).
func anyAcked(items []migrateItem) bool {
	for i := range items {
		if items[i].acked {
			return true
		}
	}
	return false
}

// migrateConn is a connection to a MIGRATE target, cached between calls (migrateCachedSocket).
// It is used by one MIGRATE at a time: taken out of the cache for the transfer, put back after.
type migrateConn struct {
	name   string
	nc     net.Conn
	r      *bufio.Reader
	lastDB int64 // the database selected on the target, -1: unknown
	idle   *time.Timer
}

// exchange writes AUTH, SELECT and the RESTOREs and reads their replies. write tells whether a
// failure was writing; replies is the "Target instance replied with error" text, if any;
// err is a socket error (timedOut when it was a timeout), after which the connection is
// closed.
func (cs *migrateConn) exchange(o *migrateOpts, items []migrateItem) (write bool, replies string, timedOut bool, err error) {
	sel := cs.lastDB != o.db
	buf := migrateRequest(o, items, sel)
	for pos := 0; pos < len(buf); {
		n := min(len(buf)-pos, migrateChunk)
		cs.nc.SetWriteDeadline(time.Now().Add(o.timeout))
		if _, err := cs.nc.Write(buf[pos : pos+n]); err != nil {
			return true, "", isTimeout(err), err
		}
		pos += n
	}
	var authLine, selLine []byte
	if o.pass != nil {
		if authLine, err = cs.readLine(o.timeout); err != nil {
			return false, "", isTimeout(err), err
		}
	}
	if sel {
		if selLine, err = cs.readLine(o.timeout); err != nil {
			return false, "", isTimeout(err), err
		}
	}
	for i := range items {
		line, err := cs.readLine(o.timeout)
		if err != nil {
			cs.lastDB = -1
			return false, replies, isTimeout(err), err
		}
		errLine := line
		switch {
		case len(authLine) > 0 && authLine[0] == '-':
			errLine = authLine
		case len(selLine) > 0 && selLine[0] == '-':
			errLine = selLine
		}
		if errLine[0] != '-' {
			items[i].acked = true
			continue
		}
		if replies == "" {
			cs.lastDB = -1
			replies = "ERR Target instance replied with error: " + string(errLine[1:])
		}
	}
	if replies == "" {
		cs.lastDB = o.db
	}
	return false, replies, false, nil
}

// migrateRequest is the bytes MIGRATE writes to its target.
func migrateRequest(o *migrateOpts, items []migrateItem, sel bool) []byte {
	var b []byte
	bulkCount := func(n int) { b = resp.AppendArrayLen(b, n) }
	if o.pass != nil {
		if o.user != nil {
			bulkCount(3)
			b = resp.AppendBulkString(b, "AUTH")
			b = resp.AppendBulk(b, o.user)
		} else {
			bulkCount(2)
			b = resp.AppendBulkString(b, "AUTH")
		}
		b = resp.AppendBulk(b, o.pass)
	}
	if sel {
		bulkCount(2)
		b = resp.AppendBulkString(b, "SELECT")
		b = resp.AppendBulk(b, strconv.AppendInt(nil, o.db, 10))
	}
	var num [20]byte
	for _, it := range items {
		if o.replace {
			bulkCount(5)
		} else {
			bulkCount(4)
		}
		if o.cluster {
			b = resp.AppendBulkString(b, "RESTORE-ASKING")
		} else {
			b = resp.AppendBulkString(b, "RESTORE")
		}
		b = resp.AppendBulk(b, it.key)
		b = resp.AppendBulk(b, strconv.AppendInt(num[:0], it.ttl, 10))
		b = resp.AppendBulk(b, it.payload)
		if o.replace {
			b = resp.AppendBulkString(b, "REPLACE")
		}
	}
	return b
}

// readLine reads one reply line without its CRLF, cut to what Redis's buffer holds; an empty
// line is an error, as connSyncReadLine's zero count is.
func (cs *migrateConn) readLine(timeout time.Duration) ([]byte, error) {
	cs.nc.SetReadDeadline(time.Now().Add(timeout))
	var line []byte
	for {
		part, err := cs.r.ReadSlice('\n')
		if len(line) < migrateLineMax-1 {
			line = append(line, part[:min(len(part), migrateLineMax-1-len(line))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	if len(line) == 0 {
		return nil, errors.New("empty reply line")
	}
	return line, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// migrateSockets is the process's cache of MIGRATE connections by "host:port", at most
// migrateCacheItems, each closed after migrateCacheTTL unused (Redis's cron closes them; here
// a timer per idle connection does).
var migrateSockets = &socketCache{m: map[string]*migrateConn{}}

type socketCache struct {
	mu sync.Mutex
	m  map[string]*migrateConn
}

// get takes name's cached connection out of the cache, or dials one (port read as atoi does).
func (sc *socketCache) get(name string, host, port []byte, timeout time.Duration) (*migrateConn, error) {
	sc.mu.Lock()
	cs := sc.m[name]
	if cs != nil {
		delete(sc.m, name)
		cs.idle.Stop()
	}
	sc.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	p := 0
	for _, d := range port {
		if d < '0' || d > '9' || p > 1<<20 {
			break
		}
		p = p*10 + int(d-'0')
	}
	if len(host) == 0 { // getaddrinfo refuses it; Go would dial the local system
		return nil, errors.New("no host")
	}
	p &= 0xffff // as the C library stores a port past 65535
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(string(host), strconv.Itoa(p)), timeout)
	if err != nil {
		return nil, err
	}
	return &migrateConn{name: name, nc: nc, r: bufio.NewReaderSize(nc, 4096), lastDB: -1}, nil
}

// put returns cs to the cache after a transfer that left it usable.
func (sc *socketCache) put(cs *migrateConn) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.m[cs.name] != nil { // another MIGRATE to the same target cached its own meanwhile
		cs.nc.Close()
		return
	}
	if len(sc.m) >= migrateCacheItems {
		for k, old := range sc.m { // drop one at random, as Redis does
			old.idle.Stop()
			old.nc.Close()
			delete(sc.m, k)
			break
		}
	}
	sc.m[cs.name] = cs
	cs.idle = time.AfterFunc(migrateCacheTTL, func() {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		if sc.m[cs.name] == cs {
			delete(sc.m, cs.name)
			cs.nc.Close()
		}
	})
}

// len is INFO's migrate_cached_sockets.
func (sc *socketCache) len() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.m)
}
