package server

// The append-only file in the server (issue 17 item 3): persist/aof's Writer over the
// write-effect feed, opened at start (after loading) or by CONFIG SET appendonly yes, the
// durability rule of every appendfsync policy (Env.Durable), MISCONF while the disk refuses writes,
// and the rewrites (aof_rewrite.go).
//
// Ordering invariants:
//
//  1. The writer's feed reader is attached holding every shard's token, and the writer starts at
//     the feed's sequence number read in that same hold: every write after it reaches the
//     writer, none before (those are in what was loaded, or in the rewrite's base).
//  2. No reply of a batch is written, and no keyspace event of it is published, before the
//     writer's Durable() reaches the feed's sequence number read after the batch ran: every
//     write the batch made or could have read is fsynced first under always, and written to the
//     file (write(2), in the page cache) under everysec and no, so a killed process loses no
//     acknowledged write under any policy, as with Redis, which writes its AOF buffer before
//     it sends replies. A reply that can never be made durable (the writer closed short of it)
//     is not written: the connection is closed.
//  3. A policy change or appendonly no closes the writer (its final write and fsync) before the
//     next one opens on the same reader, so entries go to the files once and in order; waiters
//     move to the new writer.
//  4. The MISCONF gate follows the writer's sticky error, checked by the cron hz times a
//     second: set while Err() is set, cleared once an fsync covering it succeeded.

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/pipeline/feed"
)

// aofState is the server's append-only file. run is nil while appendonly is no.
type aofState struct {
	fs  aof.FS
	mu  sync.Mutex // start, stop, policy changes and rewrites, one at a time
	run atomic.Pointer[aofRun]

	scheduled atomic.Bool               // aof_rewrite_scheduled: waiting for a BGSAVE to end
	rewriting atomic.Bool               // a rewrite runs (from its start, before the writer knows)
	reopen    atomic.Bool               // an appendfsync change waits for the rewrite to end
	misconf   atomic.Bool               // the MISCONF gate is set for the AOF
	last      atomic.Pointer[aof.Stats] // the INFO fields when the writer closed
	lastCow   atomic.Int64              // aof_last_cow_size: the last rewrite's peak queued bytes
	temporary atomic.Bool               // run is BGREWRITEAOF's writer under appendonly no: INFO says off
	// lost: the writer lost the feed and only a rewrite from a fresh reader goes on (persist/aof
	// invariant 6); the cron retries one a second (lostTry) until one succeeds.
	lost    atomic.Bool
	lostTry atomic.Int64
}

// aofRun is one open writer and the feed reader it consumes (through a gate).
type aofRun struct {
	w      *aof.Writer
	rd     *feed.Reader
	src    *gatedSource
	always bool
}

// gatedSource is the writer's feed reader with a pause: while paused, Next returns nothing.
// A rewrite pauses it before its snapshot and resumes it after StartRewrite, so the writer has
// routed nothing past the snapshot point when the rewrite registers (persist/aof's
// ErrRewriteLate rule), with Engine.WriteRDB calling its Instant after the tokens are released.
// Next holds mu, so once pause returns no Next is running.
type gatedSource struct {
	mu     sync.Mutex
	paused bool
	rd     *feed.Reader
}

func (g *gatedSource) Next() ([]feed.Entry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused {
		return nil, nil
	}
	return g.rd.Next()
}

func (g *gatedSource) pause(on bool) {
	g.mu.Lock()
	g.paused = on
	g.mu.Unlock()
}

func policyOf(name string) aof.Policy {
	switch name {
	case "always":
		return aof.Always
	case "no":
		return aof.No
	}
	return aof.Everysec
}

// aofDir is appenddirname inside dir.
func (s *Server) aofDir() string { return filepath.Join(s.dataDir, s.cfg.String("appenddirname")) }

func (s *Server) aofConfig(m *aof.Manifest, start uint64, pending bool) aof.Config {
	return aof.Config{FS: s.aof.fs, Dir: s.aofDir(), Filename: s.cfg.String("appendfilename"),
		Fsync: policyOf(s.cfg.String("appendfsync")), Manifest: m, Start: start, Pending: pending,
		OnLost:  func() { go s.aofLost() },
		Logf:    func(format string, args ...any) { s.log.Warn(fmt.Sprintf(format, args...)) },
		Latency: s.Engine.LatencyEvent}
}

// openAOF starts a writer on the AOF directory (m is what Load returned, nil to read it),
// attaching its reader at an exact point (invariant 1); pending leaves the directory as it is
// until a rewrite from a new source (persist/aof's Config.Pending). The caller holds s.aof.mu.
func (s *Server) openAOF(m *aof.Manifest, pending bool) error {
	g := s.Engine.Group
	g.LockAll()
	start := s.Engine.Feed.Seq()
	rd := s.Engine.Feed.Attach()
	g.UnlockAll()
	return s.openWriter(m, start, rd, pending)
}

func (s *Server) openWriter(m *aof.Manifest, start uint64, rd *feed.Reader, pending bool) error {
	cfg := s.aofConfig(m, start, pending)
	src := &gatedSource{rd: rd}
	w, err := aof.Open(cfg, src)
	if err != nil {
		rd.Close()
		return err
	}
	s.aof.run.Store(&aofRun{w: w, rd: rd, src: src, always: cfg.Fsync == aof.Always})
	return nil
}

// closeAOF writes and fsyncs what the writer holds and closes it. The caller holds s.aof.mu.
func (s *Server) closeAOF() error {
	r := s.aof.run.Load()
	if r == nil {
		return nil
	}
	err := r.w.Close()
	s.aof.last.Store(s.aofStats(r))
	s.aof.run.Store(nil)
	s.aof.lost.Store(false)
	r.rd.Close()
	s.clearAOFError()
	return err
}

// applyAppendOnly is CONFIG SET appendonly: yes opens the AOF and rewrites it from a snapshot,
// so that its base holds the data set (Redis's startAppendOnly); no closes it. Until that
// rewrite ends the directory stays as it was (Redis writes no manifest before either): the
// writer is pending, and the rewrite comes with a reader attached before its snapshot, as after
// a lost feed; the cron retries it once a second if it fails.
func (s *Server) applyAppendOnly(v string) error {
	s.aof.mu.Lock()
	on := s.aof.run.Load() != nil
	if v == "yes" && !on {
		if err := s.openAOF(nil, true); err != nil {
			s.aof.mu.Unlock()
			s.log.Warn("Redis needs to enable the AOF but can't open the append only file", "err", err)
			return errors.New("Failed to start AOF")
		}
		s.aof.lost.Store(true) // the rewrite needs a new source (rewriteAOF)
		s.aof.lostTry.Store(time.Now().UnixNano())
		s.aof.mu.Unlock()
		// Scheduled while a BGSAVE runs, as Redis's startAppendOnly does.
		if _, err := s.bgRewriteAOF(); err != nil {
			s.log.Warn("Background append only file rewrite after CONFIG SET appendonly yes failed", "err", err)
		}
		return nil
	}
	if v == "no" && on {
		err := s.closeAOF()
		s.aof.mu.Unlock()
		if err != nil {
			s.log.Warn("Error closing the append only file", "err", err)
		}
		return nil
	}
	s.aof.mu.Unlock()
	return nil
}

// applyFsync is CONFIG SET appendfsync: the writer is closed (its final fsync) and opened again
// on the same reader under the new policy (invariant 3). While a rewrite runs (it holds the
// AOF's lock) the change waits for the cron, so that CONFIG SET does not wait for the rewrite.
func (s *Server) applyFsync() {
	if s.aofRewriting() {
		s.aof.reopen.Store(true)
		return
	}
	s.reopenAOF()
}

func (s *Server) reopenAOF() {
	s.aof.mu.Lock()
	defer s.aof.mu.Unlock()
	r := s.aof.run.Load()
	if r == nil {
		return
	}
	if err := r.w.Close(); err != nil {
		s.log.Warn("Error closing the append only file", "err", err)
	}
	s.aof.last.Store(s.aofStats(r))
	// A writer still waiting for its rewrite from a new source stays so (pending).
	if err := s.openWriter(nil, r.w.Durable(), r.rd, r.w.Capped()); err != nil {
		s.aof.run.Store(nil)
		s.log.Error("Can't reopen the append only file after CONFIG SET appendfsync", "err", err)
	}
}

// durable is Env.Durable (invariant 2). With the AOF off it is one atomic load.
func (s *Server) durable(_ any, final bool) bool {
	r := s.aof.run.Load()
	if r == nil {
		return true
	}
	seq := s.Engine.Feed.Seq()
	if r.w.Durable() >= seq {
		return true
	}
	r.w.Notify()
	if !final && s.Engine.Settings().NotifyKeyspaceEvents == 0 {
		return true
	}
	if !r.always && r.w.Capped() {
		// Pending (appendonly yes) or a lost feed under everysec/no: nothing is durable until a
		// rewrite's base is in, and Redis answers meanwhile (its writes wait in a temp file).
		return true
	}
	return s.waitDurable(r, seq)
}

// waitDurable waits for seq to be durable under the policy (fsynced under always, written under
// everysec and no), following the writer across reopenings; false when the AOF was turned off
// short of it. Under everysec and no a disk that refuses writes does not hold replies back (Redis
// answers them and refuses the next writes with MISCONF); under always it does.
func (s *Server) waitDurable(r *aofRun, seq uint64) bool {
	for {
		err := r.w.WaitDurable(seq, time.Second)
		if err == nil {
			return true
		}
		if !errors.Is(err, aof.ErrClosed) {
			if !r.always && (r.w.Err() != nil || r.w.Capped()) {
				return true
			}
			continue // always: the reply waits (nothing unsynced is acknowledged)
		}
		next := s.aof.run.Load()
		switch {
		case next == nil:
			return false
		case next == r:
			time.Sleep(time.Millisecond) // being reopened
		default:
			r = next
		}
	}
}

// mayBlock is Env.MayBlock: under always every batch may wait for an fsync, so none runs on a
// netpoll poller, whose other connections would wait too and could not join the group commit.
func (s *Server) mayBlock(engine func(any, [][]byte) bool) func(any, [][]byte) bool {
	return func(client any, args [][]byte) bool {
		if r := s.aof.run.Load(); r != nil && r.always {
			return true
		}
		return engine != nil && engine(client, args)
	}
}

// aofCron runs hz times a second: it wakes the writer for the cron's own writes (active expiry),
// follows its error state with the MISCONF gate, and starts the automatic rewrite.
func (s *Server) aofCron() {
	r := s.aof.run.Load()
	if r == nil {
		return
	}
	r.w.Notify()
	if err := r.w.Err(); err != nil {
		if !s.aof.misconf.Swap(true) {
			s.setWriteError(writeErrAOF, aof.Strerror(err))
		}
	} else {
		s.clearAOFError()
	}
	if s.aof.reopen.Load() && !s.aofRewriting() {
		s.aof.reopen.Store(false)
		go s.reopenAOF()
		return
	}
	if s.aof.lost.Load() && !s.aofRewriting() && !s.rdb.inProgress() &&
		time.Now().UnixNano()-s.aof.lostTry.Load() >= int64(time.Second) {
		s.aof.lostTry.Store(time.Now().UnixNano())
		go s.aofLost()
		return
	}
	if s.aof.scheduled.Load() && !s.rdb.inProgress() {
		s.aof.scheduled.Store(false)
		s.bgRewriteAOF()
		return
	}
	st := r.w.Stats()
	if st.ShouldRewrite(int(s.cfg.Int("auto-aof-rewrite-percentage")), s.cfg.Int("auto-aof-rewrite-min-size")) &&
		!s.rdb.inProgress() {
		s.log.Info("Starting automatic rewriting of AOF", "growth_percent",
			st.CurrentSize*100/max(st.BaseSize, 1)-100)
		s.bgRewriteAOF()
	}
}

// aofStats are r's INFO fields continuing those of the writers before it (a writer's own start
// from zero): rewrites add up, the last rewrite's fields are the newest writer's that had one.
func (s *Server) aofStats(r *aofRun) *aof.Stats {
	st := r.w.Stats()
	if prev := s.aof.last.Load(); prev != nil {
		st.Rewrites += prev.Rewrites
		if st.LastRewriteTimeSec < 0 && !st.RewriteInProgress {
			st.LastRewriteTimeSec, st.LastBgrewriteStatus = prev.LastRewriteTimeSec, prev.LastBgrewriteStatus
			st.RewritesConsecutiveFailures = prev.RewritesConsecutiveFailures
		}
	}
	return &st
}

func (s *Server) clearAOFError() {
	if s.aof.misconf.Swap(false) {
		s.setWriteError(writeErrAOF, "")
	}
}

// aofLost is the writer's OnLost: the feed dropped entries it had not read, so only a rewrite
// from a new reader and a snapshot can go on (persist/aof invariant 6).
func (s *Server) aofLost() {
	s.aof.lost.Store(true)
	s.log.Warn("The AOF writer lost the write feed; starting an AOF rewrite")
	if err := s.rewriteAOF(); err != nil {
		s.log.Error("Background AOF rewrite after the feed was lost failed", "err", err)
	}
}
