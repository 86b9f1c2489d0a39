package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A batch is up to --batch encoded commands (and 1 MB), written in one write; a connection keeps
// inflight/batch batches unanswered at most, so about --inflight commands are in flight.
type batch struct {
	buf   []byte
	ends  []int      // end of each command in buf
	lines []int64    // its input line
	retry []bool     // whether it may be sent again after a lost connection
	subs  [][]subCmd // a grouped command's single-line commands, nil for others
}

func (b *batch) add(args [][]byte, line int64, subs []subCmd) {
	b.buf = appendCommand(b.buf, args)
	b.ends = append(b.ends, len(b.buf))
	b.lines = append(b.lines, line)
	b.retry = append(b.retry, idempotent(args))
	b.subs = append(b.subs, subs)
}

// addEncoded adds an encoded command that may be sent again.
func (b *batch) addEncoded(enc []byte, line int64) {
	b.buf = append(b.buf, enc...)
	b.ends = append(b.ends, len(b.buf))
	b.lines = append(b.lines, line)
	b.retry = append(b.retry, true)
	b.subs = append(b.subs, nil)
}

func (b *batch) n() int { return len(b.ends) }

func (b *batch) cmd(i int) []byte {
	from := 0
	if i > 0 {
		from = b.ends[i-1]
	}
	return b.buf[from:b.ends[i]]
}

func (b *batch) reset() {
	clear(b.subs)
	b.buf, b.ends, b.lines, b.retry, b.subs = b.buf[:0], b.ends[:0], b.lines[:0], b.retry[:0], b.subs[:0]
}

func appendCommand(dst []byte, args [][]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// Verbs whose second execution leaves what the first left, so a command whose reply was lost with
// its connection is sent again. Anything else (INCR, LPUSH, APPEND, XADD, ZADD INCR, …) is reported
// as an error instead: it may or may not have run.
var idempotentVerbs = map[string]bool{
	"SET": true, "SETEX": true, "PSETEX": true, "MSET": true, "HSET": true, "HMSET": true, "HDEL": true,
	"SADD": true, "SREM": true, "ZADD": true, "ZREM": true, "DEL": true, "UNLINK": true, "EXPIRE": true,
	"PEXPIRE": true, "EXPIREAT": true, "PEXPIREAT": true, "PERSIST": true, "PFADD": true, "GEOADD": true,
	"SETBIT": true, "SETRANGE": true, "JSON.SET": true, "IPSET.ADD": true, "IPSET.DEL": true,
	"SELECT": true, "PING": true, "GET": true, "EXISTS": true, "SISMEMBER": true, "IPSET.CONTAINS": true,
}

func idempotent(args [][]byte) bool {
	if len(args) == 0 {
		return false
	}
	var up [16]byte
	v := args[0]
	if len(v) > len(up) {
		return false
	}
	for i, c := range v {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up[i] = c
	}
	if !idempotentVerbs[string(up[:len(v)])] { // the lookup does not allocate
		return false
	}
	if string(up[:len(v)]) == "ZADD" {
		for _, a := range args[2:] {
			if bytes.EqualFold(a, []byte("INCR")) {
				return false
			}
		}
	}
	return true
}

// errGroup is every error reply (or bad input line) of one kind: messages equal once quoted parts
// are blanked ("ERR invalid IP set entry '*'"), with the first message and the first lines.
type errGroup struct {
	key     string
	example string
	count   int64
	lines   []int64
}

type stats struct {
	sent, replied, retried atomic.Int64
	split                  []subCmd // single-line commands of failed grouped ones, to send next
	splits                 int64    // grouped commands that failed
	mu                     sync.Mutex
	groups                 map[string]*errGroup
	errors                 int64
	maxLines               int
}

func (s *stats) fail(msg string, line int64) {
	key := groupKey(msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[string]*errGroup{}
	}
	g := s.groups[key]
	if g == nil {
		if len(s.groups) >= 1000 {
			key = "(other errors)"
			if g = s.groups[key]; g == nil {
				g = &errGroup{key: key, example: msg}
				s.groups[key] = g
			}
		} else {
			g = &errGroup{key: key, example: msg}
			s.groups[key] = g
		}
	}
	g.count++
	s.errors++
	if len(g.lines) < s.maxLines {
		g.lines = append(g.lines, line)
	}
}

// splitUp keeps the single-line commands of a grouped command that failed.
func (s *stats) splitUp(subs []subCmd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.split = append(s.split, subs...)
	s.splits++
}

func (s *stats) errorCount() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errors
}

// groupKey blanks what sits between single quotes, so errors naming different arguments group.
func groupKey(msg string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		switch {
		case c == '\'' && !in:
			in = true
			b.WriteString("'*")
		case c == '\'' && in:
			in = false
			b.WriteByte('\'')
		case !in:
			b.WriteByte(c)
		}
	}
	if in {
		return msg
	}
	return b.String()
}

func (s *stats) report(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gs := make([]*errGroup, 0, len(s.groups))
	for _, g := range s.groups {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].count != gs[j].count {
			return gs[i].count > gs[j].count
		}
		return gs[i].key < gs[j].key
	})
	for _, g := range gs {
		var lines []string
		slices.Sort(g.lines) // connections answer out of input order
		for _, l := range g.lines {
			lines = append(lines, strconv.FormatInt(l, 10))
		}
		more := ""
		if g.count > int64(len(g.lines)) {
			more = ", …"
		}
		first := ""
		if g.example != g.key {
			first = " (first: " + g.example + ")"
		}
		fmt.Fprintf(w, "  %d× %s%s at line %s%s\n", g.count, g.key, first, strings.Join(lines, ", "), more)
	}
}

// --- connections ------------------------------------------------------------------------------

type dialer struct {
	addr     string
	user     string
	pass     string
	db       int
	timeout  time.Duration
	retries  int
	backoff  time.Duration
	resp3    bool
	dialHook func(net.Conn) // tests: see each new connection
}

// dial connects and sends AUTH and SELECT, failing on their error replies.
func (d *dialer) dial() (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", d.addr, d.timeout)
	if err != nil {
		return nil, nil, err
	}
	rd := bufio.NewReaderSize(deadlineReader{c, d.timeout}, 1<<16)
	var setup []byte
	n := 0
	if d.pass != "" {
		if d.user != "" {
			setup = appendCommand(setup, [][]byte{[]byte("AUTH"), []byte(d.user), []byte(d.pass)})
		} else {
			setup = appendCommand(setup, [][]byte{[]byte("AUTH"), []byte(d.pass)})
		}
		n++
	}
	if d.db != 0 {
		setup = appendCommand(setup, [][]byte{[]byte("SELECT"), []byte(strconv.Itoa(d.db))})
		n++
	}
	if n > 0 {
		c.SetWriteDeadline(time.Now().Add(d.timeout))
		if _, err := c.Write(setup); err != nil {
			c.Close()
			return nil, nil, err
		}
		for range n {
			msg, err := readReply(rd)
			if err != nil {
				c.Close()
				return nil, nil, err
			}
			if msg != "" {
				c.Close()
				return nil, nil, fmt.Errorf("%s", msg)
			}
		}
	}
	if d.dialHook != nil {
		d.dialHook(c)
	}
	return c, rd, nil
}

// deadlineReader fails a read that waits longer than d for its bytes.
type deadlineReader struct {
	c net.Conn
	d time.Duration
}

func (r deadlineReader) Read(p []byte) (int, error) {
	r.c.SetReadDeadline(time.Now().Add(r.d))
	return r.c.Read(p)
}

var errProtocol = errors.New("malformed reply")

// readReply consumes one reply (RESP2 or RESP3, any depth) and returns its error text when the
// top-level reply is an error, "" otherwise.
func readReply(rd *bufio.Reader) (string, error) {
	ln, err := rd.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return "", errProtocol
		}
		return "", err
	}
	if len(ln) < 3 || ln[len(ln)-2] != '\r' {
		return "", errProtocol
	}
	body := ln[1 : len(ln)-2]
	switch ln[0] {
	case '-':
		return string(body), nil
	case '+', ':', ',', '#', '(', '_':
		return "", nil
	case '$', '=', '!':
		n, err := strconv.Atoi(string(body))
		if err != nil || n < -1 {
			return "", errProtocol
		}
		if n < 0 {
			return "", nil
		}
		if ln[0] == '!' {
			buf := make([]byte, 0, min(n, 4096))
			for rem := n; rem > 0; {
				chunk, err := rd.Peek(min(rem, rd.Size()))
				if len(chunk) == 0 {
					return "", unexpected(err)
				}
				buf = append(buf, chunk...)
				rd.Discard(len(chunk))
				rem -= len(chunk)
			}
			if _, err := rd.Discard(2); err != nil {
				return "", unexpected(err)
			}
			return string(buf), nil
		}
		if _, err := rd.Discard(n + 2); err != nil {
			return "", unexpected(err)
		}
		return "", nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(string(body))
		if err != nil || n < -1 {
			return "", errProtocol
		}
		if ln[0] == '%' || ln[0] == '|' {
			n *= 2
		}
		for range n {
			if _, err := readReply(rd); err != nil {
				return "", err
			}
		}
		if ln[0] == '|' { // an attribute precedes the real reply
			return readReply(rd)
		}
		return "", nil
	}
	return "", errProtocol
}

// conn is one of the -c connections: a writer (this goroutine) and a reader goroutine per
// connection lifetime, with at most depth batches unanswered between them.
type conn struct {
	d     *dialer
	st    *stats
	depth int
	in    <-chan *batch
	free  chan *batch
}

// run sends every batch of in until it closes. It returns an error only when it could not
// reconnect: the commands it still held are then counted as errors.
func (c *conn) run() error {
	var retry []*batch // batches to send again first, after a reconnect
	var sock net.Conn
	var rd *bufio.Reader
	failures := 0
	for {
		if sock == nil {
			var err error
			sock, rd, err = c.d.dial()
			for err != nil {
				failures++
				if failures > c.d.retries {
					c.abandon(retry, "connection lost and could not reconnect: "+err.Error())
					return err
				}
				time.Sleep(c.d.backoff << min(failures-1, 6))
				sock, rd, err = c.d.dial()
			}
		}
		before := c.st.replied.Load()
		closed, lost, err := c.session(sock, rd, &retry)
		if c.st.replied.Load() > before {
			failures = 0 // progress: the retry budget is for consecutive failures
		}
		sock.Close()
		sock = nil
		if err == nil && closed {
			return nil
		}
		for _, b := range lost {
			retry = append(retry, c.salvage(b))
		}
		retry = compact(retry)
		failures++
		if failures > c.d.retries {
			c.abandon(retry, "connection lost and retries exhausted: "+err.Error())
			c.drain()
			return err
		}
		time.Sleep(c.d.backoff << min(failures-1, 6))
		if !closed || len(retry) > 0 {
			continue
		}
		return nil
	}
}

type pendingBatch struct {
	b     *batch
	done  int           // replies read
	wrote chan struct{} // closed once the writer is done with b: only then may it be reused
}

// session writes batches on one connection until the input ends (closed) or the connection fails
// (err); lost are the batches not wholly answered, with how many replies each got.
func (c *conn) session(sock net.Conn, rd *bufio.Reader, retry *[]*batch) (closed bool, lost []pendingBatch, err error) {
	pending := make(chan *pendingBatch, c.depth)
	var rerr error
	var wg sync.WaitGroup
	var readerDone = make(chan struct{})
	var cur atomic.Pointer[pendingBatch]
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(readerDone)
		for p := range pending {
			cur.Store(p)
			for p.done < p.b.n() {
				msg, err := readReply(rd)
				if err != nil {
					rerr = err
					return
				}
				if msg != "" {
					if subs := p.b.subs[p.done]; subs != nil {
						c.st.splitUp(subs)
					} else {
						c.st.fail(msg, p.b.lines[p.done])
					}
				}
				p.done++
				c.st.replied.Add(1)
			}
			cur.Store(nil)
			<-p.wrote
			p.b.reset()
			select {
			case c.free <- p.b:
			default:
			}
		}
	}()
	var werr error
	var unsent []*batch
	send := func(b *batch) bool {
		p := &pendingBatch{b: b, wrote: make(chan struct{})}
		select {
		case pending <- p:
		case <-readerDone:
			unsent = append(unsent, b)
			return false
		}
		defer close(p.wrote)
		sock.SetWriteDeadline(time.Now().Add(c.d.timeout))
		if _, err := sock.Write(b.buf); err != nil {
			werr = err
			return false
		}
		c.st.sent.Add(int64(b.n()))
		return true
	}
	ok := true
	for len(*retry) > 0 && ok {
		b := (*retry)[0]
		*retry = (*retry)[1:]
		c.st.retried.Add(int64(b.n()))
		ok = send(b)
	}
	for ok {
		b, more := <-c.in
		if !more {
			closed = true
			break
		}
		ok = send(b)
	}
	close(pending)
	if ok {
		wg.Wait()
		if rerr == nil {
			return closed, nil, nil
		}
	} else {
		sock.Close() // unblocks the reader
		wg.Wait()
	}
	if p := cur.Load(); p != nil {
		lost = append(lost, *p)
	}
	for p := range pending {
		lost = append(lost, *p)
	}
	for _, b := range unsent {
		lost = append(lost, pendingBatch{b: b, wrote: closedChan})
	}
	err = werr
	if err == nil {
		err = rerr
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	return false, lost, err
}

// salvage keeps the unanswered commands of b that may be sent again, and counts the others as
// errors.
func (c *conn) salvage(p pendingBatch) *batch {
	nb := &batch{}
	for i := p.done; i < p.b.n(); i++ {
		if p.b.retry[i] {
			nb.buf = append(nb.buf, p.b.cmd(i)...)
			nb.ends = append(nb.ends, len(nb.buf))
			nb.lines = append(nb.lines, p.b.lines[i])
			nb.retry = append(nb.retry, true)
			nb.subs = append(nb.subs, p.b.subs[i])
			continue
		}
		c.st.fail("connection lost before the reply; not sent again (not idempotent)", p.b.lines[i])
	}
	return nb
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func compact(bs []*batch) []*batch {
	out := bs[:0]
	for _, b := range bs {
		if b.n() > 0 {
			out = append(out, b)
		}
	}
	return out
}

func (c *conn) abandon(bs []*batch, msg string) {
	for _, b := range bs {
		for _, l := range b.lines {
			c.st.fail(msg, l)
		}
	}
}

// drain counts what is still queued for this connection as not loaded, so the producer never
// blocks on a connection that gave up.
func (c *conn) drain() {
	for b := range c.in {
		c.abandon([]*batch{b}, "not sent: the connection gave up")
	}
}
