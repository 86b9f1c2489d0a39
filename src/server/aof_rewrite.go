package server

// AOF rewrites: BGREWRITEAOF, the automatic rule, CONFIG SET appendonly yes and recovery after
// the feed was lost. The base is a point-in-time snapshot written by Engine.WriteRDB: as it is
// (the RDB preamble), or decoded into commands with aof-use-rdb-preamble no (aof_base.go). The
// rewrite registers with the writer at the snapshot's point (persist/aof's StartRewrite rule)
// with the writer's source paused across the instant, so no entry after the point reaches the
// old INCR file; after a lost feed a reader is attached before the snapshot instead and handed
// over with it.

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/pipeline/feed"
)

// rewriteInstantDelay, set by tests only, widens the gap between the snapshot's instant and the
// rewrite's registration, where a writer not paused would route past the point.
var rewriteInstantDelay atomic.Int64

// aofRewriting reports whether an AOF rewrite runs.
func (s *Server) aofRewriting() bool { return s.aof.rewriting.Load() }

// bgRewriteAOF is BGREWRITEAOF's start: scheduled while a BGSAVE runs, as Redis does.
func (s *Server) bgRewriteAOF() (scheduled bool, err error) {
	if s.aofRewriting() {
		return false, errRewriteRunning
	}
	if s.rdb.bg.Load() {
		s.aof.scheduled.Store(true)
		return true, nil
	}
	off := s.aof.run.Load() == nil
	s.aof.rewriting.Store(true) // a BGSAVE from now on is refused or scheduled
	s.bgWork.Add(1)
	go func() {
		defer s.bgWork.Done()
		defer s.aof.rewriting.Store(false)
		if off { // as Redis with appendonly no: the files are written, the AOF stays off
			s.aof.mu.Lock()
			s.aof.temporary.Store(true)
			err := s.openAOF(nil, false)
			s.aof.mu.Unlock()
			if err != nil {
				s.aof.temporary.Store(false)
				s.log.Warn("Can't open the append only file for the rewrite", "err", err)
				return
			}
		}
		if err := s.rewriteAOF(); errors.Is(err, errBgsaveRunning) {
			s.aof.scheduled.Store(true) // a SAVE took the snapshot first: the cron starts it after
		} else if err != nil {
			s.log.Warn("Background AOF rewrite failed", "err", err)
		}
		if off {
			s.aof.mu.Lock()
			s.closeAOF()
			s.aof.temporary.Store(false)
			s.aof.mu.Unlock()
		}
	}()
	return false, nil
}

// rewriteAOF runs one rewrite to its end. It holds rdb.busy: a rewrite and a BGSAVE never run
// at once (both are snapshots, and Engine.StartSnapshot takes one at a time).
func (s *Server) rewriteAOF() error {
	if !s.rdb.busy.TryLock() {
		return errBgsaveRunning
	}
	defer s.rdb.busy.Unlock()
	s.aof.rewriting.Store(true)
	defer s.aof.rewriting.Store(false)
	s.aof.mu.Lock()
	defer s.aof.mu.Unlock()
	r := s.aof.run.Load()
	if r == nil {
		return errors.New("the append only file is off")
	}
	s.log.Info("Background append only file rewriting started")
	t0 := time.Now()
	var err error
	if !s.aof.lost.Load() {
		err = s.rewriteFrom(r, nil)
	}
	if s.aof.lost.Load() || errors.Is(err, aof.ErrNeedSource) {
		s.aof.lost.Store(true)
		s.aof.lostTry.Store(time.Now().UnixNano())
		if err = s.rewriteFrom(r, s.Engine.AttachFeed()); err == nil {
			s.aof.lost.Store(false)
		}
	}
	if err != nil {
		return err
	}
	s.log.Info("Background AOF rewrite terminated with success", "seconds", time.Since(t0).Seconds())
	return nil
}

// rewriteFrom writes the base from a snapshot; fresh, when not nil, is a reader attached before
// it that replaces the writer's (after a lost feed). Otherwise the writer's source is paused from
// before the snapshot until the rewrite is registered at its point.
func (s *Server) rewriteFrom(r *aofRun, fresh *feed.Reader) error {
	pr, pw := io.Pipe()
	var startErr error
	var next *gatedSource
	if fresh != nil {
		next = &gatedSource{rd: fresh}
	} else {
		r.src.pause(true)
	}
	resume := sync.OnceFunc(func() {
		r.src.pause(false)
		r.w.Notify()
	})
	defer resume()
	started := make(chan struct{})
	o := s.rdbOptions()
	preamble := s.cfg.Bool("aof-use-rdb-preamble")
	o.aofBase = preamble
	o.instant = func(seq uint64) error {
		if d := rewriteInstantDelay.Load(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		if next != nil {
			startErr = r.w.StartRewrite(seq, next)
		} else {
			startErr = r.w.StartRewrite(seq, nil)
		}
		resume()
		close(started)
		return startErr
	}
	done := make(chan error, 1)
	go func() {
		st, err := s.writeRDB(pw, o, &s.rdb)
		s.aof.lastCow.Store(st.peakQueued)
		pw.CloseWithError(err)
		done <- err
	}()
	fail := func(err error) error {
		resume()
		pr.CloseWithError(err)
		<-done
		if fresh != nil {
			fresh.Close()
		}
		return err
	}
	select {
	case <-started:
	case err := <-done:
		done <- err
		if err == nil {
			err = errors.New("the snapshot ended before its instant")
		}
		return fail(err)
	}
	if startErr != nil {
		return fail(startErr)
	}
	ferr := r.w.FinishRewrite(func(w io.Writer) error {
		if !preamble {
			return rdbToCommands(w, pr)
		}
		_, err := io.Copy(w, pr)
		return err
	}, preamble)
	pr.CloseWithError(errors.New("rewrite ended"))
	if werr := <-done; ferr == nil && werr != nil {
		ferr = werr
	}
	if fresh != nil {
		old := r.rd
		r.rd, r.src = fresh, next // the writer reads fresh now
		old.Close()
	}
	return ferr
}
