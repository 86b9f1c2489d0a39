package server

// PSYNC replication, the replica side (issue 23 item 3): REPLICAOF's link to a primary (Redis's
// handshake, the RDB loaded from a file under dir behind -LOADING, the stream applied by a
// master client that gets no replies and passes the replica gates), ACKs, and the hand-over of
// the link's bytes, verbatim, to the backlog and sub-replicas (repl.go invariant 4).
//
// Ordering invariants:
//
//  1. The link's stream is applied in order, one read's complete commands at a time; the
//     replication offset (slave_repl_offset) moves past a command only after it ran, and the
//     bytes go to the backlog and sub-replicas after that, holding applyMu for both.
//  2. REPLCONF GETACK is answered after the commands before it ran, with the offset before it
//     (Redis's reploff is updated after the command); PING only counts in the offset.
//  3. The cached master: on a lost link, a demotion or a promotion the replica keeps its replid
//     and offset, and PSYNCs with them (offset+1), so a primary holding that history continues.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/command"
	"github.com/hotkv/hotkv/src/repl"
	"github.com/hotkv/hotkv/src/repl/backlog"
)

// Link states, as ROLE names them.
const (
	lsConnect = iota
	lsConnecting
	lsHandshake
	lsSync
	lsConnected
)

var linkStateNames = []string{"connect", "connecting", "handshake", "sync", "connected"}

// masterLink is the replica role's connection to its primary.
type masterLink struct {
	r     *replState
	host  string
	port  int
	up    atomic.Bool
	state atomic.Int32
	stop  chan struct{}
	done  chan struct{}

	wmu  sync.Mutex
	conn net.Conn

	off       atomic.Int64 // slave_repl_offset: applied
	readOff   atomic.Int64 // slave_read_repl_offset
	lastIO    atomic.Int64 // unix ns
	downSince atomic.Int64 // unix ns; 0 never up
	syncTotal atomic.Int64
	syncRead  atomic.Int64

	mc *masterClient
	// streamDB is the master client's database after the last applied batch (applyMu): a
	// sub-replica's RDB names it as repl-stream-db.
	streamDB atomic.Int32
	// inMulti: the stream is inside MULTI … EXEC; held are its bytes so far, applied (queued)
	// but not yet in the offset, the backlog or the sub-replicas' streams, as Redis moves a
	// master client's reploff only outside a transaction. A cut (a sub-replica's snapshot) never
	// falls inside one. Both are applyMu's.
	inMulti bool
	held    []byte
}

// masterClient applies the primary's commands through the normal pipeline, as Redis's master
// client: replies are dropped, and the replica gates let it through.
type masterClient struct {
	cl  *command.Client
	pc  *pipeline.Conn
	mem *dropStream
}

func (s *Server) newMasterClient() *masterClient {
	mem := &dropStream{}
	cl := s.Engine.NewClient("", "", func() {})
	cl.Authed = true
	s.Engine.SetMasterClient(cl)
	return &masterClient{cl: cl, mem: mem, pc: pipeline.NewConn(s.env, mem, cl)}
}

func (m *masterClient) close(s *Server) {
	s.Engine.SetMasterClient(nil)
	s.Engine.RemoveClient(m.cl)
}

// run applies what was gathered.
func (m *masterClient) run() error {
	if m.mem.Len() == 0 {
		m.mem.buf, m.mem.off = m.mem.buf[:0], 0
		return nil
	}
	err := m.pc.Serve()
	m.mem.buf, m.mem.off = m.mem.buf[:0], 0
	return err
}

// dropStream is pipeline.Stream over a byte slice whose replies are dropped.
type dropStream struct {
	buf []byte
	off int
}

func (m *dropStream) Len() int { return len(m.buf) - m.off }
func (m *dropStream) Peek(n int) ([]byte, error) {
	if n > m.Len() {
		return nil, io.ErrUnexpectedEOF
	}
	return m.buf[m.off : m.off+n], nil
}
func (m *dropStream) Skip(n int) error     { m.off += n; return nil }
func (m *dropStream) Release() error       { return nil }
func (m *dropStream) Inline() bool         { return false }
func (m *dropStream) Fill() bool           { return false }
func (m *dropStream) Write(p []byte) error { return nil }

// ReplicaOf is REPLICAOF host port | NO ONE.
func (h *replHooks) ReplicaOf(cl *command.Client, host string, port int) []byte {
	r := h.r()
	r.mu.Lock()
	failingOver := r.fo.state != foNone
	r.mu.Unlock()
	if failingOver {
		return []byte("-ERR REPLICAOF not allowed while failing over.\r\n")
	}
	if host == "" {
		if r.currentLink() == nil {
			return []byte("+OK\r\n")
		}
		r.promote()
		r.setReplicaofConfig("no one")
		r.s.log.Info("MASTER MODE enabled (user request from '" + cl.Addr + "')")
		return []byte("+OK\r\n")
	}
	if port < 0 || port > 65535 {
		return []byte("-ERR Invalid master port\r\n")
	}
	if l := r.currentLink(); l != nil && strings.EqualFold(l.host, host) && l.port == port {
		return []byte("+OK Already connected to specified master\r\n")
	}
	r.setMaster(host, port)
	r.setReplicaofConfig(host + " " + strconv.Itoa(port))
	r.s.log.Info(fmt.Sprintf("REPLICAOF %s:%d enabled (user request from '%s')", host, port, cl.Addr))
	return []byte("+OK\r\n")
}

// setReplicaofConfig keeps the replicaof directive equal to the role, as Redis's masterhost and
// masterport are that directive: CONFIG GET replicaof shows it and CONFIG REWRITE writes it (or,
// after NO ONE, removes the line).
func (r *replState) setReplicaofConfig(v string) {
	if err := r.s.cfg.SetInternal("replicaof", v); err != nil {
		r.s.log.Warn("Cannot update the replicaof directive", "value", v, "err", err)
	}
}

func (r *replState) currentLink() *masterLink {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.link
}

// setMaster makes the server a replica of host:port (invariant 3: it keeps its history).
func (r *replState) setMaster(host string, port int) {
	r.mu.Lock()
	old := r.link
	r.link = nil
	r.mu.Unlock()
	var mc *masterClient
	if old != nil {
		mc = old.halt()
	}
	r.mu.Lock()
	if r.rd != nil { // a primary no more: the stream is the new primary's (repl.go invariant 4)
		r.rd.Close()
		r.rd = nil
	}
	if r.bl == nil {
		r.bl = newBacklog(r.s)
		r.enc = repl.NewEncoder()
	}
	r.s.Engine.SetReplicaRole(true) // no active expiry: the primary's DELs expire keys
	l := &masterLink{r: r, host: host, port: port, stop: make(chan struct{}), done: make(chan struct{}), mc: mc}
	l.off.Store(r.bl.Offset())
	l.readOff.Store(r.bl.Offset())
	r.link = l
	if !r.started.Load() {
		r.started.Store(true)
		go r.pump()
	}
	r.mu.Unlock()
	r.applyGates()
	go l.run()
}

// promote is REPLICAOF NO ONE: the link stops, the history becomes replid2 up to the offset,
// and the feed feeds the stream again, starting with a SELECT.
func (r *replState) promote() {
	r.mu.Lock()
	l := r.link
	r.link = nil
	r.mu.Unlock()
	if l != nil {
		if mc := l.halt(); mc != nil {
			mc.close(r.s)
		}
	}
	unlockAll := r.lockAllThenMu() // the feed reader is attached below (lock order, repl.go)
	_, id := r.s.Engine.ReplIDs()
	if r.bl == nil {
		r.bl = newBacklog(r.s)
		r.enc = repl.NewEncoder()
	}
	r.replid2, r.secondOff = id, r.bl.Offset()+1
	r.s.Engine.SetReplID(command.NewReplID())
	r.s.Engine.SetReplicaRole(false)
	r.attachLocked()
	unlockAll()
	subs := append([]*replica(nil), r.replicas...)
	r.mu.Unlock()
	for _, rp := range subs { // they learn the new replid by reconnecting (+CONTINUE)
		rp.cl.Kill()
	}
	r.applyGates()
}

func newBacklog(s *Server) *backlog.Ring { return backlog.New(int(s.cfg.Int("repl-backlog-size")), 0) }

// halt stops the link and waits for it; it returns the master client for a successor.
func (l *masterLink) halt() *masterClient {
	close(l.stop)
	l.wmu.Lock()
	if l.conn != nil {
		l.conn.Close()
	}
	l.wmu.Unlock()
	<-l.done
	return l.mc
}

func (l *masterLink) stopped() bool {
	select {
	case <-l.stop:
		return true
	case <-l.r.s.stopped:
		return true
	default:
		return false
	}
}

// run connects and reconnects until halted or the server stops (the link closes then, as
// Redis's does at exit: a primary waiting for its replicas at shutdown is not kept waiting).
func (l *masterLink) run() {
	defer close(l.done)
	s := l.r.s
	go func() {
		select {
		case <-s.stopped:
			l.wmu.Lock()
			if l.conn != nil {
				l.conn.Close()
			}
			l.wmu.Unlock()
		case <-l.done:
		}
	}()
	for !l.stopped() {
		l.state.Store(lsConnecting)
		err := l.session()
		was := l.up.Swap(false)
		l.state.Store(lsConnect)
		if was {
			l.downSince.Store(time.Now().UnixNano())
			s.log.Info("Connection with master lost.")
		}
		l.r.applyGates()
		if l.stopped() {
			return
		}
		if err != nil {
			s.log.Warn("Error condition on socket for SYNC", "master", l.addr(), "err", err)
		}
		select {
		case <-l.stop:
			return
		case <-s.stopped:
			return
		case <-time.After(time.Second):
		}
	}
}

func (l *masterLink) addr() string { return net.JoinHostPort(l.host, strconv.Itoa(l.port)) }

// session is one connection: the handshake, a sync, then the stream until it breaks.
func (l *masterLink) session() error {
	s := l.r.s
	s.log.Info("Connecting to MASTER " + l.addr())
	c, err := net.DialTimeout("tcp", l.addr(), time.Duration(s.cfg.Int("repl-timeout"))*time.Second)
	if err != nil {
		return err
	}
	l.wmu.Lock()
	l.conn = c
	l.wmu.Unlock()
	defer c.Close()
	if l.stopped() {
		return nil
	}
	if l.mc != nil && l.mc.cl.Killed() { // CLIENT KILL TYPE master: the cached master keeps its db
		db := l.mc.cl.DB
		l.mc.close(s)
		l.mc = s.newMasterClient()
		l.mc.cl.DB = db
	}
	l.state.Store(lsHandshake)
	br := bufio.NewReaderSize(c, 64<<10)
	timeout := time.Duration(s.cfg.Int("repl-timeout")) * time.Second
	cmd := func(args ...string) (string, error) {
		c.SetDeadline(time.Now().Add(timeout))
		if err := l.write(repl.AppendCommand(nil, args...)); err != nil {
			return "", err
		}
		return readLine(br)
	}
	reply, err := cmd("PING")
	if err != nil {
		return err
	}
	if strings.HasPrefix(reply, "-") && !strings.HasPrefix(reply, "-NOAUTH") && !strings.HasPrefix(reply, "-NOPERM") &&
		!strings.HasPrefix(reply, "-ERR operation not permitted") {
		return errors.New("Error reply to PING from master: '" + reply + "'")
	}
	if pass := s.cfg.String("masterauth"); pass != "" {
		args := []string{"AUTH", pass}
		if u := s.cfg.String("masteruser"); u != "" {
			args = []string{"AUTH", u, pass}
		}
		if reply, err = cmd(args...); err != nil {
			return err
		}
		if strings.HasPrefix(reply, "-") {
			return errors.New("Unable to AUTH to MASTER: " + reply)
		}
	}
	port := s.cfg.Int("replica-announce-port")
	if port == 0 {
		port = s.cfg.Int("port")
	}
	if reply, err = cmd("REPLCONF", "listening-port", strconv.FormatInt(port, 10)); err != nil {
		return err
	}
	if ip := s.cfg.String("replica-announce-ip"); ip != "" {
		if reply, err = cmd("REPLCONF", "ip-address", ip); err != nil {
			return err
		}
	}
	if reply, err = cmd("REPLCONF", "capa", "eof", "capa", "psync2", "capa", "hotkv"); err != nil {
		return err
	}
	// PSYNC with the cached master (invariant 3).
	l.r.mu.Lock()
	_, id := s.Engine.ReplIDs()
	psyncOff := l.off.Load() + 1
	askID, askOff := id, strconv.FormatInt(psyncOff, 10)
	if l.r.fresh {
		askID, askOff = "?", "-1"
	}
	psync := []string{"PSYNC", askID, askOff}
	failover := l.r.failoverPsyncLocked()
	if failover { // the target becomes the primary (repl_failover.go)
		psync = append(psync, "FAILOVER")
	}
	l.r.mu.Unlock()
	c.SetDeadline(time.Now().Add(timeout))
	if err := l.write(repl.AppendCommand(nil, psync...)); err != nil {
		return err
	}
	for {
		if reply, err = readLine(br); err != nil {
			return err
		}
		if reply != "" {
			break
		}
	}
	if failover {
		l.r.failoverAnswered(strings.HasPrefix(reply, "+FULLRESYNC") || strings.HasPrefix(reply, "+CONTINUE"))
	}
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC"):
		f := strings.Fields(reply)
		if len(f) != 3 {
			return errors.New("Master replied with wrong +FULLRESYNC syntax: " + reply)
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return err
		}
		s.log.Info("Full resync from master: " + f[1] + ":" + f[2])
		if err := l.fullSync(c, br, f[1], off); err != nil {
			return err
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		newID := strings.TrimSpace(strings.TrimPrefix(reply, "+CONTINUE"))
		s.log.Info("Successful partial resynchronization with master.")
		l.r.mu.Lock()
		if newID != "" && newID != id {
			l.r.replid2, l.r.secondOff = id, psyncOff
			s.Engine.SetReplID(newID)
			l.r.killSubsLocked()
		}
		l.r.mu.Unlock()
		if l.mc == nil {
			l.mc = s.newMasterClient()
			l.streamDB.Store(0)
		}
	case strings.HasPrefix(reply, "-NOMASTERLINK"), strings.HasPrefix(reply, "-LOADING"):
		return errors.New("Master is currently unable to PSYNC but should be in the future: " + reply)
	default:
		return errors.New("Unexpected reply to PSYNC from master: " + reply)
	}
	l.up.Store(true)
	l.state.Store(lsConnected)
	l.lastIO.Store(time.Now().UnixNano())
	l.r.applyGates()
	s.log.Info("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization or finished a full one")
	l.ackNow()
	err = l.stream(c, br)
	l.discardOpenMulti()
	return err
}

// discardOpenMulti ends a transaction the link broke inside: its bytes are not in the offset,
// so the primary sends the whole of it again after PSYNC (Redis discards the cached master's
// transaction likewise).
func (l *masterLink) discardOpenMulti() {
	l.r.applyMu.Lock()
	defer l.r.applyMu.Unlock()
	if !l.inMulti {
		return
	}
	l.inMulti, l.held = false, l.held[:0]
	l.mc.mem.buf = repl.AppendCommand(l.mc.mem.buf[:0], "DISCARD")
	l.mc.run()
	l.streamDB.Store(int32(l.mc.cl.DB))
}

// killSubsLocked disconnects the sub-replicas: the history they follow changed.
func (r *replState) killSubsLocked() {
	for _, rp := range r.replicas {
		rp.cl.Kill()
	}
}

func (l *masterLink) write(p []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.conn == nil {
		return net.ErrClosed
	}
	_, err := l.conn.Write(p)
	return err
}

// readLine reads one line without its CRLF (an empty string for a bare newline keepalive).
func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return "", errors.New("line too long from master")
		}
		return "", err
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

// fullSync reads the RDB ($<len> or $EOF:<mark>) into a file under dir, then flushes the data
// and loads it behind -LOADING, sending "\n" to the primary every second meanwhile.
func (l *masterLink) fullSync(c net.Conn, br *bufio.Reader, id string, off int64) error {
	s := l.r.s
	l.state.Store(lsSync)
	timeout := time.Duration(s.cfg.Int("repl-timeout")) * time.Second
	var hdr string
	for {
		c.SetDeadline(time.Now().Add(timeout))
		line, err := readLine(br)
		if err != nil {
			return err
		}
		l.lastIO.Store(time.Now().UnixNano())
		if line == "" {
			continue // keepalive while the primary prepares the RDB
		}
		if line[0] == '-' {
			return errors.New("MASTER aborted replication with an error: " + line[1:])
		}
		if line[0] != '$' {
			return errors.New("Bad protocol from MASTER, the first byte is not '$': " + line)
		}
		hdr = line[1:]
		break
	}
	// Redis's temp-<unixtime>.<pid>.rdb, made unique: several servers of one process (tests) may
	// share the directory, and two links' files of one name corrupted each other.
	f, err := os.CreateTemp(s.dataDir, "temp-"+strconv.FormatInt(time.Now().Unix(), 10)+"."+strconv.Itoa(os.Getpid())+".*.rdb")
	if err != nil {
		return err
	}
	path := f.Name()
	defer os.Remove(path)
	defer f.Close()
	l.syncRead.Store(0)
	if mark, ok := strings.CutPrefix(hdr, "EOF:"); ok {
		if len(mark) != 40 {
			return errors.New("bad EOF mark from MASTER")
		}
		l.syncTotal.Store(-1)
		if err := copyUntilMark(c, br, f, []byte(mark), timeout, l); err != nil {
			return err
		}
	} else {
		n, err := strconv.ParseInt(hdr, 10, 64)
		if err != nil || n < 0 {
			return errors.New("bad bulk length from MASTER: " + hdr)
		}
		l.syncTotal.Store(n)
		buf := make([]byte, 256<<10)
		for left := n; left > 0; {
			c.SetDeadline(time.Now().Add(timeout))
			k, err := br.Read(buf[:min(int64(len(buf)), left)])
			if k > 0 {
				if _, werr := f.Write(buf[:k]); werr != nil {
					return werr
				}
				left -= int64(k)
				l.syncRead.Add(int64(k))
				l.lastIO.Store(time.Now().UnixNano())
			}
			if err != nil {
				return err
			}
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	s.log.Info("MASTER <-> REPLICA sync: Flushing old data")
	// The sub-replicas follow a history that ends here.
	l.r.mu.Lock()
	l.r.killSubsLocked()
	l.r.mu.Unlock()
	done := make(chan struct{})
	go func() { // "\n" to the primary while loading, as Redis's replicationSendNewlineToMaster
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l.write([]byte("\n"))
			}
		}
	}()
	defer close(done)
	if l.mc != nil {
		l.mc.close(s)
	}
	l.mc = s.newMasterClient()
	s.setLoading(true)
	s.Engine.ExemptFromLoading(l.mc.cl)
	l.mc.mem.buf = repl.AppendCommand(l.mc.mem.buf[:0], "FLUSHALL")
	l.mc.mem.buf = repl.AppendCommand(l.mc.mem.buf, "FUNCTION", "FLUSH")
	err = l.mc.run()
	if err == nil {
		s.log.Info("MASTER <-> REPLICA sync: Loading DB in memory")
		var st command.LoadStats
		st, err = s.Engine.LoadRDB(f, command.LoadOptions{Size: l.syncRead.Load()})
		s.rdb.loadLoaded.Store(st.Keys)
		s.rdb.loadExpired.Store(st.Expired)
		// A primary that is itself a replica forwards its primary's bytes, which select a
		// database only where that one's changes: the stream starts in repl-stream-db.
		for _, a := range st.Aux {
			if db, perr := strconv.Atoi(a[1]); a[0] == "repl-stream-db" && perr == nil && db >= 0 && db < int(s.cfg.Int("databases")) {
				l.mc.cl.DB = db
			}
		}
		l.streamDB.Store(int32(l.mc.cl.DB))
	}
	s.Engine.ExemptFromLoading(nil)
	s.setLoading(false)
	if err != nil {
		s.log.Warn("Failed trying to load the MASTER synchronization DB from disk", "err", err)
		return err
	}
	// A new history: the primary's replid, from its offset (replid2 cleared).
	l.r.mu.Lock()
	l.r.fresh = false
	s.Engine.SetReplID(id)
	l.r.replid2, l.r.secondOff = strings.Repeat("0", 40), -1
	l.r.bl.Reset(off)
	l.off.Store(off)
	l.readOff.Store(off)
	l.r.mu.Unlock()
	s.log.Info("MASTER <-> REPLICA sync: Finished with success")
	return nil
}

// copyUntilMark copies the diskless payload to f, up to the 40-byte mark that ends it.
func copyUntilMark(c net.Conn, br *bufio.Reader, f *os.File, mark []byte, timeout time.Duration, l *masterLink) error {
	buf := make([]byte, 256<<10)
	var tail []byte // the last bytes read, held back until more come (the mark may be in them)
	for {
		c.SetDeadline(time.Now().Add(timeout))
		k, err := br.Read(buf)
		if k > 0 {
			l.lastIO.Store(time.Now().UnixNano())
			l.syncRead.Add(int64(k))
			tail = append(tail, buf[:k]...)
			if len(tail) >= len(mark) && bytes.Equal(tail[len(tail)-len(mark):], mark) {
				_, werr := f.Write(tail[:len(tail)-len(mark)])
				return werr
			}
			if len(tail) > len(mark) {
				if _, werr := f.Write(tail[:len(tail)-len(mark)]); werr != nil {
					return werr
				}
				tail = append(tail[:0], tail[len(tail)-len(mark):]...)
			}
		}
		if err != nil {
			return err
		}
	}
}

// stream applies the primary's commands until the link breaks (invariants 1 and 2).
func (l *masterLink) stream(c net.Conn, br *bufio.Reader) error {
	s := l.r.s
	timeout := time.Duration(s.cfg.Int("repl-timeout")) * time.Second
	var in []byte
	buf := make([]byte, 64<<10)
	var args [][]byte
	for {
		c.SetReadDeadline(time.Now().Add(timeout))
		k, err := br.Read(buf)
		if k > 0 {
			l.lastIO.Store(time.Now().UnixNano())
			l.readOff.Add(int64(k))
			in = append(in, buf[:k]...)
			used, perr := l.apply(in, &args)
			in = append(in[:0], in[used:]...)
			if perr != nil {
				return perr
			}
		}
		if err != nil {
			return err
		}
		if cap(in) > 1<<20 && len(in) < 64<<10 {
			in = append([]byte(nil), in...)
		}
	}
}

// apply runs the complete commands at the front of in and returns the bytes they took.
func (l *masterLink) apply(in []byte, args *[][]byte) (int, error) {
	r := l.r
	mc := l.mc
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	used, start := 0, 0 // start: the first byte not yet in the stream
	flush := func() error {
		err := mc.run()
		l.streamDB.Store(int32(mc.cl.DB))
		if err != nil {
			return err
		}
		if l.inMulti {
			l.held = append(l.held, in[start:used]...)
			start = used
			return nil
		}
		if len(l.held) > 0 || used > start {
			r.mu.Lock()
			if len(l.held) > 0 {
				r.writeLocked(l.held)
			}
			r.writeLocked(in[start:used])
			r.mu.Unlock()
			l.off.Add(int64(len(l.held) + used - start))
			l.held, start = l.held[:0], used
		}
		return nil
	}
	for used < len(in) {
		a, n, err := repl.Parse(in[used:], (*args)[:0])
		*args = a[:0]
		if err != nil {
			flush()
			return used, err
		}
		if n == 0 {
			break
		}
		switch {
		case len(a) == 0: // a newline
		case len(a) >= 2 && strings.EqualFold(string(a[0]), "replconf") && strings.EqualFold(string(a[1]), "getack"):
			if err := flush(); err != nil {
				return used, err
			}
			used += n
			l.ackNow() // the offset before the GETACK (invariant 2)
			if err := flush(); err != nil {
				return used, err
			}
			continue
		case len(a) == 1 && strings.EqualFold(string(a[0]), "ping"):
		case len(a) == 1 && strings.EqualFold(string(a[0]), "multi") && !l.inMulti:
			if err := flush(); err != nil {
				return used, err
			}
			l.inMulti = true
			mc.mem.buf = append(mc.mem.buf, in[used:used+n]...)
		case len(a) == 1 && l.inMulti && (strings.EqualFold(string(a[0]), "exec") || strings.EqualFold(string(a[0]), "discard")):
			mc.mem.buf = append(mc.mem.buf, in[used:used+n]...)
			used += n
			l.inMulti = false
			if err := flush(); err != nil {
				return used, err
			}
			continue
		default:
			mc.mem.buf = append(mc.mem.buf, in[used:used+n]...)
		}
		used += n
	}
	return used, flush()
}

// ackNow sends REPLCONF ACK <offset>.
func (l *masterLink) ackNow() {
	if l.state.Load() != lsConnected {
		return
	}
	l.write(repl.AppendCommand(nil, "REPLCONF", "ACK", strconv.FormatInt(l.off.Load(), 10)))
}

// cron runs once a second: the ACK.
func (l *masterLink) cron() { l.ackNow() }

// startRepl follows the replicaof directive once the start-up load has begun: the link PSYNCs
// with "? -1" (no cached master), as Redis after a restart without one.
func (s *Server) startRepl() {
	v := s.cfg.String("replicaof")
	host, p, ok := strings.Cut(v, " ")
	if !ok || host == "" {
		return
	}
	port, _ := strconv.Atoi(p)
	go func() {
		<-s.loaded
		s.repl.mu.Lock()
		s.repl.fresh = true
		s.repl.mu.Unlock()
		s.repl.setMaster(host, port)
	}()
}
