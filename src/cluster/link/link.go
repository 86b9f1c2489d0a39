// Package link runs the cluster bus: it listens on the bus port, keeps one outbound connection per known
// node, frames and decodes messages (cluster/wire) and feeds them to the state machine (cluster.State),
// whose answers it writes back.
//
// Ordering and ownership:
//  1. Every call into the State happens under Bus.mu, from the reader goroutines, the ticker, and Do.
//  2. Messages are encoded under Bus.mu and written outside it, each connection's writes serialized by
//     its own mutex, with a write deadline: a stuck peer never stalls the state machine.
//  3. A connection whose stream is not the bus (bad signature or length) is closed, as Redis frees the
//     link; a malformed packet is dropped and the connection kept.
package link

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hotkv/hotkv/src/cluster"
	"github.com/hotkv/hotkv/src/cluster/wire"
)

// Bus is one node's cluster bus.
type Bus struct {
	mu      sync.Mutex
	st      *cluster.State
	loc     cluster.Local
	r       *rand.Rand
	ln      net.Listener
	out     map[*cluster.Node]*conn // outbound links by node (renamed handshake nodes keep their pointer)
	dialing map[*cluster.Node]bool
	in      map[*conn]bool
	now     func() int64
	closed  chan struct{}
	wg      sync.WaitGroup
	// writing is read-held from encoding a tick's or a message's output (under mu) until it is
	// written; Do takes it exclusively before it returns, so what the node sent before a CLUSTER
	// command's change is on the wire before the command's reply. (redis-cli --cluster reshard
	// sets SETSLOT NODE on the source and then the target: a PING the source encoded before, still
	// claiming the slot, must not reach the target after it took the slot, or the target gives it
	// back to the source, at a higher epoch when the target had not bumped its own yet.)
	writing sync.RWMutex
	// OnChange, when set, runs under the bus lock after a message or tick changed nothing in
	// particular; the server saves nodes.conf from it. It must not call back into the Bus.
	OnChange func(st *cluster.State)
	// OnPublish, when set, runs (outside the lock) for every PUBLISH or PUBLISHSHARD received.
	OnPublish func(shard bool, channel, message []byte)
	offset    func() uint64 // SetSources's; under mu
	age       func() int64  // SetSources's; under mu
}

type conn struct {
	mu      sync.Mutex
	c       net.Conn
	node    *cluster.Node // outbound links only
	created int64         // unix ms the link was made (CLUSTER LINKS create-time)
	// from is, on an inbound link, the name of the known node whose messages arrive on it (set
	// under the bus lock; "" until one does).
	from string
}

// nowMS is wall time in milliseconds, the clock Redis's cluster uses.
func nowMS() int64 { return time.Now().UnixMilli() }

// Start listens on addr (the bus port) and starts the ticker.
func Start(addr string, st *cluster.State, loc cluster.Local) (*Bus, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	b := &Bus{st: st, loc: loc, r: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1)), ln: ln,
		out: map[*cluster.Node]*conn{}, dialing: map[*cluster.Node]bool{}, in: map[*conn]bool{},
		now: nowMS, closed: make(chan struct{})}
	b.wg.Add(2)
	go b.accept()
	go b.ticker()
	return b, nil
}

// Local is the node's own header fields (read it under Do only).
func (b *Bus) Local() *cluster.Local { return &b.loc }

// SetSources sets where the Local fields that change come from: the replication offset every
// header carries (Local.ReplOffset) and a replica's data age (Local.DataAge). They are read under
// the bus lock before each message, tick and Do, so they must not wait for anything that may hold
// the bus; a nil one leaves its field as it is.
func (b *Bus) SetSources(offset func() uint64, age func() int64) {
	b.mu.Lock()
	b.offset, b.age = offset, age
	b.mu.Unlock()
}

func (b *Bus) refreshLocked() {
	if b.offset != nil {
		b.loc.ReplOffset = b.offset()
	}
	if b.age != nil {
		b.loc.DataAge = b.age()
	}
}

// Addr is the address the bus listens on.
func (b *Bus) Addr() net.Addr { return b.ln.Addr() }

// Do runs f on the state under the bus lock (CLUSTER commands) and sends what it returns.
func (b *Bus) Do(f func(st *cluster.State, now int64) []cluster.Out) {
	b.mu.Lock()
	b.refreshLocked()
	outs := f(b.st, b.now())
	w := b.encodeLocked(nil, outs)
	b.mu.Unlock()
	b.writing.Lock() // the writes encoded before f ran are done
	b.writing.Unlock()
	b.flush(w)
}

// Close stops the bus and closes every connection.
func (b *Bus) Close() {
	close(b.closed)
	b.ln.Close()
	b.mu.Lock()
	for _, c := range b.out {
		c.c.Close()
	}
	for c := range b.in {
		c.c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *Bus) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		cn := &conn{c: c, created: nowMS()}
		b.mu.Lock()
		b.in[cn] = true
		b.mu.Unlock()
		b.wg.Add(1)
		go b.read(cn)
	}
}

// pending is an encoded message waiting to be written to a connection.
type pending struct {
	c    *conn
	b    []byte
	drop bool
}

// encodeLocked turns State outputs into writes; reply is the connection answers (To nil) go to.
func (b *Bus) encodeLocked(reply *conn, outs []cluster.Out) []pending {
	var w []pending
	for _, o := range outs {
		c := reply
		if o.To != nil {
			c = b.out[o.To]
		}
		if c == nil {
			continue
		}
		if o.Drop {
			w = append(w, pending{c: c, drop: true})
			continue
		}
		w = append(w, pending{c: c, b: wire.Encode(nil, o.Msg)})
	}
	return w
}

func (b *Bus) flush(w []pending) {
	for _, p := range w {
		if p.drop {
			p.c.c.Close()
			continue
		}
		p.c.mu.Lock()
		p.c.c.SetWriteDeadline(time.Now().Add(time.Second))
		_, err := p.c.c.Write(p.b)
		p.c.mu.Unlock()
		if err != nil {
			p.c.c.Close()
		}
	}
}

// read frames messages from c until it closes; outbound links report their node's link down.
func (b *Bus) read(c *conn) {
	defer b.wg.Done()
	defer b.gone(c)
	src := ""
	if a, ok := c.c.RemoteAddr().(*net.TCPAddr); ok {
		src = a.IP.String()
	}
	r := bufio.NewReaderSize(c.c, 64<<10)
	var m wire.Msg
	var buf []byte
	for {
		hdr, err := r.Peek(8)
		if err != nil {
			return
		}
		n, err := wire.Frame(hdr)
		if err != nil {
			return // not the bus: close, as Redis does
		}
		// Grow by what arrives, not by the declared length (a peer may announce 1 GB and send 8 bytes).
		buf = buf[:0]
		for len(buf) < n {
			chunk := min(n-len(buf), 64<<10)
			start := len(buf)
			buf = append(buf, make([]byte, chunk)...)
			if _, err := io.ReadFull(r, buf[start:]); err != nil {
				return
			}
		}
		if wire.Decode(buf, &m) != nil {
			continue // malformed: dropped
		}
		b.receive(c, src, &m)
	}
}

func (b *Bus) receive(c *conn, src string, m *wire.Msg) {
	b.mu.Lock()
	linkNode := c.node
	if linkNode != nil && b.out[linkNode] != c {
		linkNode = nil
	}
	if (m.Type == wire.Meet || (m.Type == wire.Ping && b.st.Myself.IP == "")) && b.loc.AnnounceIP == "" {
		// As Redis: a node learns its own address from the socket a MEET (or its first PING) came on.
		if a, ok := c.c.LocalAddr().(*net.TCPAddr); ok {
			if ip := a.IP.String(); ip != b.st.Myself.IP {
				b.st.Myself.IP = ip
				b.st.Touch()
			}
		}
	}
	b.refreshLocked()
	outs := b.st.Receive(linkNode, src, m, &b.loc, b.now(), b.r)
	if c.node == nil {
		if name := senderName(m); b.st.Nodes[name] != nil && name != b.st.Myself.Name {
			c.from = name
		}
	}
	w := b.encodeLocked(c, outs)
	if linkNode != nil && b.st.Nodes[linkNode.Name] != linkNode { // a handshake that turned out known
		w = append(w, pending{c: c, drop: true})
	}
	if b.OnChange != nil {
		b.OnChange(b.st)
	}
	b.writing.RLock()
	b.mu.Unlock()
	b.flush(w)
	b.writing.RUnlock()
	if (m.Type == wire.Publish || m.Type == wire.PublishShard) && b.OnPublish != nil {
		b.OnPublish(m.Type == wire.PublishShard, m.Channel, m.Message)
	}
}

func (b *Bus) gone(c *conn) {
	c.c.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.in, c)
	if c.node != nil && b.out[c.node] == c {
		delete(b.out, c.node)
		b.st.Disconnected(c.node)
	}
}

func (b *Bus) ticker() {
	defer b.wg.Done()
	t := time.NewTicker(cluster.TickEvery * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-b.closed:
			return
		case <-t.C:
		}
		b.mu.Lock()
		now := b.now()
		for n, c := range b.out { // forgotten or dropped nodes lose their link
			if b.st.Nodes[n.Name] != n {
				c.c.Close()
			}
		}
		for _, n := range b.st.Unlinked(now) {
			if !b.dialing[n] && b.out[n] == nil {
				b.dialing[n] = true
				b.wg.Add(1)
				go b.dial(n, net.JoinHostPort(n.IP, strconv.Itoa(n.CPort)))
			}
		}
		b.refreshLocked()
		w := b.encodeLocked(nil, b.st.Tick(&b.loc, now, b.r))
		if b.OnChange != nil {
			b.OnChange(b.st)
		}
		b.writing.RLock()
		b.mu.Unlock()
		b.flush(w)
		b.writing.RUnlock()
	}
}

func (b *Bus) dial(n *cluster.Node, addr string) {
	defer b.wg.Done()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	b.mu.Lock()
	delete(b.dialing, n)
	select {
	case <-b.closed:
		err = net.ErrClosed
	default:
	}
	if err != nil || b.st.Nodes[n.Name] != n {
		b.mu.Unlock()
		if c != nil {
			c.Close()
		}
		return
	}
	cn := &conn{c: c, node: n, created: nowMS()}
	b.out[n] = cn
	w := b.encodeLocked(nil, []cluster.Out{b.st.Connected(n, &b.loc, b.now(), b.r)})
	b.mu.Unlock()
	b.flush(w)
	b.wg.Add(1)
	go b.read(cn)
}

// senderName is the node name a message's header carries.
func senderName(m *wire.Msg) string {
	n := m.Sender[:]
	if i := bytes.IndexByte(n, 0); i >= 0 {
		n = n[:i]
	}
	return string(n)
}

// Link is one bus connection as CLUSTER LINKS reports it.
type Link struct {
	To      bool   // this node's outbound link to Node; else Node's inbound link here
	Node    string // the peer's name
	Created int64  // unix ms
}

// Links lists the bus connections as Redis's CLUSTER LINKS does: per known node (in name order),
// this node's link to it and then its newest inbound link from it, each when there is one.
func (b *Bus) Links() []Link {
	b.mu.Lock()
	defer b.mu.Unlock()
	names := make([]string, 0, len(b.st.Nodes))
	for name := range b.st.Nodes {
		if name != b.st.Myself.Name {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var ls []Link
	for _, name := range names {
		if c := b.out[b.st.Nodes[name]]; c != nil {
			ls = append(ls, Link{To: true, Node: name, Created: c.created})
		}
		var newest *conn
		for c := range b.in {
			if c.from == name && (newest == nil || c.created > newest.created) {
				newest = c
			}
		}
		if newest != nil {
			ls = append(ls, Link{Node: name, Created: newest.created})
		}
	}
	return ls
}
