package command

import (
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"
)

// clientShown mirrors the connection-owned Client state that other connections read for CLIENT
// LIST and CLIENT KILL. The owner updates the plain field and the mirror together (through the
// setters below); other goroutines read only the mirror, so there is no data race. Zero values
// mean "never set": fd unknown, RESP2, user "default".
type clientShown struct {
	fdPlus1        atomic.Int64 // the socket's fd + 1, so the zero value means unknown
	proto          atomic.Int32
	user           atomic.Pointer[string]
	noEvict        atomic.Bool
	sub, psub, ssb atomic.Int32 // subscription counts, kept by the pub/sub family
	qbuf           atomic.Int64 // unparsed bytes of a partial command (pipeline.Env.Buffered)
}

// SetFD records the connection's socket for CLIENT LIST and CLIENT INFO (the server calls it once,
// when the connection opens). A client never given one (a fake client, as Redis's Lua client)
// shows fd=-1, as in Redis.
func (cl *Client) SetFD(fd int) { cl.shown.fdPlus1.Store(int64(fd) + 1) }

// SetProto switches the connection's protocol (HELLO, RESET). Only the owner may call it.
func (cl *Client) SetProto(p int) {
	cl.Proto = p
	cl.shown.proto.Store(int32(p))
}

// SetUser records the authenticated user (AUTH, HELLO, RESET). Only the owner may call it.
func (cl *Client) SetUser(u string) {
	cl.User = u
	cl.shown.user.Store(&u)
}

// SetPubSubCounts records the client's channel, pattern and shard-channel subscription counts
// (CLIENT LIST sub= psub= ssub=, and the pubsub client type). Only the owner may call it.
func (cl *Client) SetPubSubCounts(channels, patterns, shardChannels int) {
	cl.shown.sub.Store(int32(channels))
	cl.shown.psub.Store(int32(patterns))
	cl.shown.ssb.Store(int32(shardChannels))
}

func (cl *Client) setNoEvict(on bool) {
	cl.noEvict = on
	cl.shown.noEvict.Store(on)
}

// inPubSub reports whether the client is subscribed to anything (CLIENT LIST type pubsub).
func (cl *Client) inPubSub() bool {
	s := &cl.shown
	return s.sub.Load()+s.psub.Load()+s.ssb.Load() > 0
}

// shownUser returns the user as other connections see it.
func (cl *Client) shownUser() string {
	if u := cl.shown.user.Load(); u != nil {
		return *u
	}
	return "default"
}

// clientView is one CLIENT LIST line's data, read consistently for one client.
type clientView struct {
	cl       *Client
	user     string
	name     string
	cmd      string
	fd       int64
	db       int32
	proto    int32
	argvMem  int
	closing  bool
	blocked  bool // waiting in a blocking command (flag b)
	noEvict  bool
	multi    int32 // queued commands, -1 outside MULTI
	multiMem int64
	dirtyCAS bool // a watched key changed (flag d)
	sub      int32
	psub     int32
	ssub     int32
	lastSeen int64
}

// viewOf reads cl for a CLIENT LIST line. self is the calling connection: its own fields are
// read directly (they are current), and args is the command being run (argv-mem).
func viewOf(cl *Client, self bool, args [][]byte) clientView {
	v := clientView{cl: cl, name: cl.Name(), cmd: *cl.lastCmd.Load(), fd: cl.shown.fdPlus1.Load() - 1,
		db: cl.dbShown.Load(), proto: max(cl.shown.proto.Load(), 2), user: cl.shownUser(),
		noEvict: cl.shown.noEvict.Load(), sub: cl.shown.sub.Load(), psub: cl.shown.psub.Load(),
		ssub: cl.shown.ssb.Load(), lastSeen: cl.lastSeen.Load(), closing: cl.killed.Load()}
	v.multi, v.multiMem, v.dirtyCAS = cl.tx.shown.Load()-1, cl.tx.shownMem.Load(), cl.tx.dirtyCAS.Load()
	if w := cl.blockedOn.Load(); w != nil {
		// Redis keeps a blocked command's arguments until it is served: they count in argv-mem.
		v.blocked, v.argvMem = true, w.argvMem
	}
	if self {
		v.proto, v.user, v.db, v.noEvict = int32(cl.Proto), cl.User, int32(cl.DB), cl.noEvict
		v.closing = v.closing || cl.closeAfter
		for _, a := range args {
			v.argvMem += len(a)
		}
	}
	if v.cmd == "" {
		v.cmd = "NULL"
	}
	return v
}

// appendFlags appends CLIENT LIST's flags field in Redis's letter order.
func (v *clientView) appendFlags(dst []byte) []byte {
	n := len(dst)
	if v.sub+v.psub+v.ssub > 0 {
		dst = append(dst, 'P')
	}
	if v.multi >= 0 {
		dst = append(dst, 'x')
	}
	if v.blocked {
		dst = append(dst, 'b')
	}
	if v.dirtyCAS {
		dst = append(dst, 'd')
	}
	if v.closing {
		dst = append(dst, 'c')
	}
	if v.noEvict {
		dst = append(dst, 'e')
	}
	if len(dst) == n {
		dst = append(dst, 'N')
	}
	return dst
}

// clientBaseMem approximates a connection's fixed memory for tot-mem.
const clientBaseMem = int(unsafe.Sizeof(Client{}))

// appendClientLine appends one CLIENT LIST / CLIENT INFO line, newline included, with Redis
// 7.0's fields in its order. qbuf is the input the connection holds beyond the running command
// (a partial command, netpoll's stash), omem its output not yet taken by the kernel and the
// pushes waiting for it; the other buffer fields (qbuf-free, rbs, obl, oll) are 0: the pipeline
// has no static reply buffer or reply list to count.
func appendClientLine(dst []byte, v *clientView, now int64) []byte {
	cl := v.cl
	num := func(name string, n int64) {
		dst = append(dst, ' ')
		dst = append(dst, name...)
		dst = append(dst, '=')
		dst = strconv.AppendInt(dst, n, 10)
	}
	str := func(name, s string) {
		dst = append(dst, ' ')
		dst = append(dst, name...)
		dst = append(dst, '=')
		dst = append(dst, s...)
	}
	dst = append(dst, "id="...)
	dst = strconv.AppendUint(dst, cl.ID, 10)
	str("addr", cl.Addr)
	str("laddr", cl.LAddr)
	num("fd", v.fd)
	str("name", v.name)
	num("age", int64(time.Duration(now-cl.Created)/time.Second))
	num("idle", int64(time.Duration(max(now-v.lastSeen, 0))/time.Second))
	dst = append(dst, " flags="...)
	dst = v.appendFlags(dst)
	num("db", int64(v.db))
	num("sub", int64(v.sub))
	num("psub", int64(v.psub))
	num("ssub", int64(v.ssub))
	num("multi", int64(v.multi))
	in, out := cl.buffers()
	num("qbuf", in)
	num("qbuf-free", 0)
	num("argv-mem", int64(v.argvMem))
	num("multi-mem", v.multiMem)
	for _, f := range [...]string{"rbs", "rbp", "obl", "oll"} {
		num(f, 0)
	}
	num("omem", out) // replies the kernel has not taken, and pushes waiting (client_limits.go)
	num("tot-mem", int64(clientBaseMem+v.argvMem+len(v.name))+v.multiMem+in+out)
	str("events", "r")
	str("cmd", v.cmd)
	str("user", v.user)
	num("redir", -1)
	num("resp", int64(v.proto))
	return append(dst, '\n')
}
