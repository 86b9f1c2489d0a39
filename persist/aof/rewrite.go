package aof

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// ErrRewriteInProgress is Redis's reply text to a BGREWRITEAOF while one runs.
var ErrRewriteInProgress = errors.New("Background append only file rewriting already in progress")

// ErrRewriteLate means the writer had already appended entries past the snapshot point to the
// old INCR file when the rewrite was registered: StartRewrite must be called before any entry
// after the snapshot can reach the feed (while the snapshot's shard tokens are held).
var ErrRewriteLate = errors.New("aof: entries past the snapshot point were already written; rewrite again")

// ErrNeedSource means the feed was lost and a rewrite must come with a new source.
var ErrNeedSource = errors.New("aof: the write feed was lost: a rewrite needs a new source")

// rewrite is one rewrite from StartRewrite to its end.
type rewrite struct {
	at      uint64
	src     Source
	temp    bool // the new INCR file is temp-<fn>.incr until the base is in
	err     error
	adopted chan struct{} // closed by the loop once the new INCR file is open (or it failed)
}

// Rewrite is BGREWRITEAOF from a point-in-time snapshot at feed sequence at: StartRewrite(at,
// nil) followed by FinishRewrite. The caller must call it (or StartRewrite) before any entry
// after at can be appended.
func (w *Writer) Rewrite(at uint64, writeBase func(w io.Writer) error, rdbPreamble bool) error {
	if err := w.StartRewrite(at, nil); err != nil {
		return err
	}
	return w.FinishRewrite(writeBase, rdbPreamble)
}

// StartRewrite registers a rewrite whose snapshot holds every entry up to at and none after. It
// does not block: the loop opens a new INCR file (listed in a persisted manifest after the old
// ones, so a crash loses nothing) before it writes any entry after at; entries up to at still go
// to the old file. src, when not nil, replaces the source (a reader attached before the snapshot
// was taken; required after feed.ErrLost): then entries up to at are dropped (the base holds
// them) and the new INCR file joins the manifest only with the base.
func (w *Writer) StartRewrite(at uint64, src Source) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.stats.RewriteInProgress {
		return ErrRewriteInProgress
	}
	w.pending = &rewrite{at: at, src: src, adopted: make(chan struct{})}
	w.active, w.started = w.pending, w.pending
	w.stats.RewriteInProgress = true
	w.rwStart = w.now()
	w.Notify()
	return nil
}

// FinishRewrite writes the base (writeBase streams the snapshot; a temp file, fsynced, renamed),
// then persists the manifest base(new) + incr(new), marks the old files history and deletes them.
func (w *Writer) FinishRewrite(writeBase func(w io.Writer) error, rdbPreamble bool) error {
	w.mu.Lock()
	rw := w.started // not active: the loop may have failed and ended it already
	w.started = nil
	w.mu.Unlock()
	if rw == nil {
		return errors.New("aof: no rewrite started")
	}
	<-rw.adopted
	if rw.err != nil {
		// The loop records the end right after it releases adopted: a round trip through it
		// lets a caller that sees the error start the next rewrite at once.
		w.do(func() {})
		return rw.err
	}
	tmp := join(w.cfg.Dir, "temp-rewriteaof-"+w.cfg.Filename)
	err := w.writeBaseFile(tmp, writeBase)
	hook("base-written")
	if err == nil {
		if derr := w.do(func() { err = w.install(rw, tmp, rdbPreamble) }); derr != nil {
			err = derr
		}
	} else {
		w.cfg.FS.Remove(tmp)
		w.do(func() { w.endRewrite(rw, err) })
	}
	return err
}

func (w *Writer) writeBaseFile(tmp string, writeBase func(io.Writer) error) error {
	f, err := w.cfg.FS.Create(tmp)
	if err != nil {
		return fmt.Errorf("cannot open the temp rewrite file: %w", err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	err = writeBase(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write the AOF rewrite base: %w", err)
	}
	return nil
}

// adopt takes a registered rewrite on the loop: it opens the new INCR file.
func (w *Writer) adopt() {
	w.mu.Lock()
	rw := w.pending
	w.pending = nil
	w.mu.Unlock()
	if rw == nil {
		return
	}
	if err := w.switchIncr(rw); err != nil {
		rw.err = err
		close(rw.adopted)
		w.endRewrite(rw, err)
		return
	}
	w.rw = rw
	close(rw.adopted)
}

func (w *Writer) switchIncr(rw *rewrite) error {
	if rw.src == nil {
		if w.lost {
			return ErrNeedSource
		}
		if w.routed > rw.at {
			return ErrRewriteLate
		}
		m := w.man.clone()
		m.IncrSeq++
		name := IncrName(w.cfg.Filename, m.IncrSeq)
		t, err := w.openTarget(name, true)
		if err != nil {
			return err
		}
		m.Incr = append(m.Incr, Info{Name: name, Seq: m.IncrSeq, Type: TypeIncr})
		if err := writeManifest(w.cfg.FS, w.cfg.Dir, w.cfg.Filename, m); err != nil {
			t.f.Close()
			return err
		}
		w.logf("Creating AOF incr file %s on background rewrite", name)
		w.man, w.old, w.cur = m, w.cur, t
		hook("incr-opened")
		return nil
	}
	// A new source: what the old files miss is in the snapshot only, so nothing counts as
	// durable past what was until the base is in, and the new INCR file stays out of the manifest.
	var t *target
	if w.cur.temp { // the last rewrite from a new source failed: start its file over
		w.waitBgSync()
		if err := w.cur.f.Truncate(0); err != nil {
			return err
		}
		t = w.cur
		t.buf, t.size, t.db, t.dirt = t.buf[:0], 0, -1, false
	} else {
		var err error
		if t, err = w.openTarget("temp-"+w.cfg.Filename+".incr", true); err != nil {
			return err
		}
		t.temp = true
		w.flush()
		w.waitBgSync()
		w.cur.f.Close()
	}
	if w.old != nil {
		w.old.f.Close()
	}
	w.cap.Store(min(w.cap.Load(), w.durable.Load()))
	w.cur, w.old, w.src, w.lost, rw.temp = t, nil, rw.src, false, true
	w.routed, w.written, w.synced = rw.at, rw.at, rw.at
	hook("incr-opened")
	return nil
}

// install puts the new base in place (loop side of FinishRewrite).
func (w *Writer) install(rw *rewrite, tmp string, rdb bool) error {
	if w.rw != rw {
		return ErrClosed
	}
	fsys, dir, fn := w.cfg.FS, w.cfg.Dir, w.cfg.Filename
	m := w.man.clone()
	fail := func(err error) error {
		fsys.Remove(tmp)
		w.endRewrite(rw, err)
		return err
	}
	if rw.temp {
		w.retryAt = time.Time{}
		w.flush()
		if len(w.cur.buf) > 0 {
			return fail(w.Err())
		}
		w.waitBgSync()
		if err := w.cur.f.Sync(); err != nil {
			return fail(err)
		}
		w.cur.dirt = false
		m.IncrSeq++
		name := IncrName(fn, m.IncrSeq)
		if err := fsys.Rename(join(dir, w.cur.name), join(dir, name)); err != nil {
			return fail(err)
		}
		w.cur.name, w.cur.temp = name, false
		m.Incr = append(m.Incr, Info{Name: name, Seq: m.IncrSeq, Type: TypeIncr})
	}
	if m.Base != nil {
		h := *m.Base
		h.Type = TypeHistory
		m.History = append([]Info{h}, m.History...)
	}
	m.BaseSeq++
	m.Base = &Info{Name: BaseName(fn, m.BaseSeq, rdb), Seq: m.BaseSeq, Type: TypeBase}
	if err := fsys.Rename(tmp, join(dir, m.Base.Name)); err != nil {
		return fail(err)
	}
	hook("base-renamed")
	for _, i := range m.Incr[:len(m.Incr)-1] {
		i.Type = TypeHistory
		m.History = append([]Info{i}, m.History...)
	}
	m.Incr = m.Incr[len(m.Incr)-1:]
	if err := writeManifest(fsys, dir, fn, m); err != nil {
		return fail(err)
	}
	hook("manifest-persisted")
	w.man = m
	if w.old != nil {
		w.waitBgSync()
		w.old.f.Close()
		w.old = nil
	}
	w.deleteHistory()
	hook("history-deleted")
	w.written, w.synced = max(w.written, rw.at), max(w.synced, rw.at)
	if w.buffered() == 0 {
		w.written = w.routed
	}
	if rw.temp {
		w.synced = w.written
	}
	w.cap.Store(math.MaxUint64)
	switch {
	case w.cfg.Fsync == Always || w.distrust:
		w.publish(w.synced)
	default:
		w.publish(w.written)
	}
	w.endRewrite(rw, nil)
	return nil
}

// retireOld closes the previous INCR file once no rewrite needs it and its entries are written
// and fsynced (a failed rewrite leaves them there, listed in the manifest).
func (w *Writer) retireOld() {
	if w.old == nil || w.rw != nil || len(w.old.buf) > 0 {
		return
	}
	w.waitBgSync()
	if w.old.dirt {
		if err := w.old.f.Sync(); err != nil {
			w.fail("Can't persist AOF for fsync error", err)
			return
		}
	}
	w.old.f.Close()
	w.old = nil
}

// deleteHistory removes the history files and persists the manifest without them, as Redis's
// aofDelHistoryFiles; a failure is only logged (the next rewrite tries again).
func (w *Writer) deleteHistory() {
	if len(w.man.History) == 0 {
		return
	}
	m := w.man.clone()
	for _, h := range m.History {
		w.logf("Removing the history file %s in the background", h.Name)
		if err := w.cfg.FS.Remove(join(w.cfg.Dir, h.Name)); err != nil && !isNotExist(err) {
			w.logf("Failed to remove the history file %s: %v", h.Name, err)
		}
	}
	m.History = nil
	if err := writeManifest(w.cfg.FS, w.cfg.Dir, w.cfg.Filename, m); err != nil {
		w.logf("%v", err)
		return
	}
	w.man = m
}

// endRewrite records a rewrite's end in the INFO fields.
func (w *Writer) endRewrite(rw *rewrite, err error) {
	if w.rw == rw {
		w.rw = nil
	}
	if err != nil && rw.temp {
		// The temp INCR file lacks what the failed base held: only another rewrite from a
		// new source can go on (Durable stays capped meanwhile).
		w.lost = true
	}
	w.retireOld()
	total, base := w.fileSizes()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active == rw {
		w.active = nil
	}
	w.stats.RewriteInProgress = false
	w.stats.LastRewriteTimeSec = int64(w.now().Sub(w.rwStart) / time.Second)
	w.stats.CurrentRewriteTimeSec = -1
	if err != nil {
		w.stats.LastBgrewriteStatus = "err"
		w.stats.RewritesConsecutiveFailures++
		if w.cfg.Logf != nil {
			w.cfg.Logf("Background AOF rewrite failed: %v", err)
		}
		return
	}
	w.stats.LastBgrewriteStatus = "ok"
	w.stats.Rewrites++
	w.stats.RewritesConsecutiveFailures = 0
	w.stats.CurrentSize, w.stats.BaseSize = total, base
	if w.cfg.Logf != nil {
		w.cfg.Logf("Background AOF rewrite finished successfully")
	}
}

// testHook, set by tests only, is called at each step of a rewrite.
var testHook func(step string)

func hook(step string) {
	if testHook != nil {
		testHook(step)
	}
}
