package aof

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotkv/hotkv/pipeline/feed"
)

// Policy is appendfsync.
type Policy int

const (
	Always   Policy = iota // fsync after every write round, before Durable moves
	Everysec               // a background fsync at most once a second
	No                     // never fsync; the OS decides
)

// Source gives the writer its entries; a *feed.Reader is one. Next returns what is ready
// without waiting (an empty slice when nothing is), and feed.ErrLost when entries are gone.
type Source interface {
	Next() ([]feed.Entry, error)
}

// Config is what a Writer needs. FS, Dir and Filename are required.
type Config struct {
	FS       FS
	Dir      string // appenddirname, as a path
	Filename string // appendfilename, e.g. "appendonly.aof"
	Fsync    Policy
	// Manifest is the one Load returned; nil reads Dir's (or starts a new AOF).
	Manifest *Manifest
	// Start is the feed sequence number the data loaded before the writer corresponds to:
	// Durable starts there.
	Start uint64
	// OnLost is called (from the writer's goroutine; it must not block on the Writer) when the
	// source reports feed.ErrLost. The writer then appends nothing until StartRewrite gives it a
	// new source and a snapshot point.
	OnLost func()
	// Logf receives Redis's log lines (write errors, recovery, rewrite steps).
	Logf func(format string, args ...any)
	// MaxBuffer bounds the bytes held while the disk refuses them; past it the writer stops
	// reading its source (default 64 MiB).
	MaxBuffer int
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
	// Latency, when set, receives how long each write(2), fsync under always and file size
	// stat took, under Redis's latency monitor event names (latency.go in src/command decides
	// what is kept): "aof-write" for every write and one of "aof-write-pending-fsync" (a
	// background fsync running), "aof-write-active-child" (a rewrite running, Redis's child)
	// or "aof-write-alone"; "aof-fsync-always"; "aof-fstat". Called from the writer's goroutine
	// (and Open's, for the stats of opening); it must not block.
	Latency func(event string, d time.Duration)
	// Pending opens the writer as CONFIG SET appendonly yes does (Redis's AOF_WAIT_REWRITE): it
	// writes nothing to the files the manifest lists and persists no manifest; entries go to a
	// temp INCR file and nothing counts as durable past Start until the first rewrite, which
	// must come with a new source (StartRewrite(at, src)), installs its base and that file.
	// A crash before then finds the AOF directory as it was.
	Pending bool
}

// ErrTimeout is returned by WaitDurable when the sequence number did not become durable in time.
var ErrTimeout = errors.New("aof: timed out waiting for the AOF to be synced")

// ErrClosed is returned for calls on a closed Writer.
var ErrClosed = errors.New("aof: writer closed")

// maxRound is what one write round gathers before it writes.
const maxRound = 1 << 20

// Writer appends the feed's entries to the current INCR file of a multi-part AOF. One goroutine
// (the loop) owns the files, the manifest and the buffers; other goroutines reach it through
// Notify, WaitDurable, the rewrite calls and Stats, which only touch the atomics and the fields
// under mu.
type Writer struct {
	cfg  Config
	now  func() time.Time
	wake chan struct{} // capacity 1: a pending wake-up
	ops  chan func()
	stop chan struct{}
	done chan struct{}

	// Owned by the loop.
	src      Source
	man      *Manifest
	cur, old *target
	rw       *rewrite
	lost     bool
	routed   uint64 // highest sequence number put in a buffer (or dropped as covered by a base)
	written  uint64 // every entry up to it is written (or covered by a base)
	synced   uint64 // every entry up to it is fsynced (or in a synced base)
	distrust bool   // an error happened: only an fsync makes written entries durable again
	retryAt  time.Time
	lastSync time.Time
	bgSync   chan syncResult // non-nil while a background fsync runs
	closeErr error

	durable atomic.Uint64
	cap     atomic.Uint64 // durable never passes it (while lost: what was durable then)

	mu      sync.Mutex
	durCh   chan struct{} // closed and replaced whenever durable moves
	err     error         // sticky write/fsync error
	pending *rewrite      // registered by StartRewrite, adopted by the loop
	active  *rewrite      // from StartRewrite to the rewrite's end
	started *rewrite      // the last StartRewrite's, until FinishRewrite takes it (it may have ended)
	rwStart time.Time
	stats   Stats
	oldest  time.Time // first write not yet fsynced
	closed  bool
}

// target is one open INCR file and what is buffered for it.
type target struct {
	f    File
	name string
	temp bool  // not in the manifest yet (a rewrite after ErrLost)
	size int64 // bytes in the file that are good
	db   int   // database of the last SELECT written, -1 at the start of a file
	buf  []byte
	dirt bool // written since the last fsync
}

type syncResult struct {
	seq uint64
	err error
}

// Open starts a Writer on the AOF in cfg.Dir: it appends to the last INCR file, or creates the
// first one, and persists the manifest, as Redis does at start (aofOpenIfNeededOnServerStart).
func Open(cfg Config, src Source) (*Writer, error) {
	if cfg.MaxBuffer <= 0 {
		cfg.MaxBuffer = 64 << 20
	}
	w := &Writer{cfg: cfg, now: cfg.Now, wake: make(chan struct{}, 1), ops: make(chan func()),
		stop: make(chan struct{}), done: make(chan struct{}), src: src, durCh: make(chan struct{})}
	if w.now == nil {
		w.now = time.Now
	}
	if err := cfg.FS.MkdirAll(cfg.Dir); err != nil {
		return nil, fmt.Errorf("Can't open or create append-only dir %s: %w", cfg.Dir, err)
	}
	m := cfg.Manifest
	if m == nil {
		var err error
		if m, err = readManifest(cfg.FS, cfg.Dir, cfg.Filename); err != nil {
			return nil, err
		}
		if m == nil {
			m = &Manifest{}
		}
	}
	m = m.clone()
	var t *target
	if cfg.Pending {
		var err error
		if t, err = w.openTarget("temp-"+cfg.Filename+".incr", true); err != nil {
			return nil, err
		}
		t.temp = true
	} else {
		var name string
		if n := len(m.Incr); n > 0 {
			name = m.Incr[n-1].Name
		} else {
			m.IncrSeq++
			name = IncrName(cfg.Filename, m.IncrSeq)
			m.Incr = append(m.Incr, Info{Name: name, Seq: m.IncrSeq, Type: TypeIncr})
		}
		var err error
		if t, err = w.openTarget(name, false); err != nil {
			return nil, err
		}
		if err := writeManifest(cfg.FS, cfg.Dir, cfg.Filename, m); err != nil {
			t.f.Close()
			return nil, err
		}
	}
	w.man, w.cur = m, t
	w.routed, w.written, w.synced = cfg.Start, cfg.Start, cfg.Start
	w.durable.Store(cfg.Start)
	w.cap.Store(math.MaxUint64)
	if cfg.Pending {
		w.lost = true // the loop appends nothing until a rewrite brings a new source
		w.cap.Store(cfg.Start)
	}
	w.lastSync = w.now()
	w.stats = Stats{LastRewriteTimeSec: -1, CurrentRewriteTimeSec: -1, LastBgrewriteStatus: "ok",
		LastWriteStatus: "ok"}
	w.stats.CurrentSize, w.stats.BaseSize = w.fileSizes()
	go w.loop()
	return w, nil
}

func (w *Writer) openTarget(name string, create bool) (*target, error) {
	path := join(w.cfg.Dir, name)
	var f File
	var err error
	if create {
		f, err = w.cfg.FS.Create(path)
	} else {
		f, err = w.cfg.FS.OpenAppend(path)
	}
	if err != nil {
		return nil, fmt.Errorf("Can't open the append-only file %s: %w", name, err)
	}
	size, err := w.stat(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &target{f: f, name: name, size: size, db: -1}, nil
}

// fileSizes returns the bytes of the base and INCR files (aof_current_size) and of the base.
func (w *Writer) fileSizes() (total, base int64) {
	if w.man.Base != nil {
		base, _ = w.stat(join(w.cfg.Dir, w.man.Base.Name))
	}
	total = base
	for _, i := range w.man.Incr {
		n, _ := w.stat(join(w.cfg.Dir, i.Name))
		total += n
	}
	return total, base
}

// Capped reports whether Durable is held back from what is written: the writer is Pending, or
// lost its feed, until a rewrite from a new source installs its base.
func (w *Writer) Capped() bool { return w.cap.Load() != math.MaxUint64 }

// Notify wakes the writer: the feed has new entries. It never blocks.
func (w *Writer) Notify() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Durable returns the highest sequence number such that it and every entry before it are on
// disk under the policy: fsynced for always, written for everysec and no (fsynced, for every
// policy, while the writer recovers from an error).
func (w *Writer) Durable() uint64 { return w.durable.Load() }

// WaitDurable blocks until Durable() >= seq (nil), the timeout passes (ErrTimeout, wrapping the
// sticky error when there is one) or the writer closes (ErrClosed). Many waiters share one
// fsync: each round's fsync releases every waiter it covers.
func (w *Writer) WaitDurable(seq uint64, timeout time.Duration) error {
	var timer *time.Timer
	for {
		if w.durable.Load() >= seq {
			return nil
		}
		w.mu.Lock()
		ch, closed := w.durCh, w.closed
		w.mu.Unlock()
		if w.durable.Load() >= seq {
			return nil
		}
		if closed {
			return ErrClosed
		}
		if timer == nil {
			timer = time.NewTimer(timeout)
			defer timer.Stop()
		}
		select {
		case <-ch:
		case <-timer.C:
			if w.durable.Load() >= seq {
				return nil
			}
			if err := w.Err(); err != nil {
				return fmt.Errorf("%w: %w", ErrTimeout, err)
			}
			return ErrTimeout
		}
	}
}

// Err returns the sticky write or fsync error, nil when the AOF is healthy. While it is set the
// server refuses writes with MisconfMessage(err).
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// MisconfMessage is the error Redis answers writes with while the AOF cannot be written, without
// the leading '-': "MISCONF Errors writing to the AOF file: <strerror>".
func MisconfMessage(err error) string {
	return "MISCONF Errors writing to the AOF file: " + Strerror(err)
}

// Strerror is C's strerror for the errno inside err (glibc's wording), or err's text.
func Strerror(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		s := en.Error()
		if s != "" && s[0] >= 'a' && s[0] <= 'z' {
			s = string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	if err == nil {
		return "Success"
	}
	return err.Error()
}

// UnsyncedAge is how long the oldest write not yet fsynced has waited (0 when none): what a
// crash under everysec or no would lose.
func (w *Writer) UnsyncedAge() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.oldest.IsZero() {
		return 0
	}
	return w.now().Sub(w.oldest)
}

// Close writes and fsyncs what the source holds now, closes the files and stops the loop.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return ErrClosed
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	w.mu.Lock()
	close(w.durCh) // wake the waiters: they see the final Durable, then ErrClosed
	w.durCh = make(chan struct{})
	w.mu.Unlock()
	return w.closeErr
}

// do runs f on the loop and waits for it.
func (w *Writer) do(f func()) error {
	ran := make(chan struct{})
	select {
	case w.ops <- func() { f(); close(ran) }:
		<-ran
		return nil
	case <-w.done:
		return ErrClosed
	}
}

func (w *Writer) logf(format string, args ...any) {
	if w.cfg.Logf != nil {
		w.cfg.Logf(format, args...)
	}
}

func (w *Writer) loop() {
	defer close(w.done)
	for {
		select {
		case f := <-w.ops:
			f()
			continue
		case r := <-w.bgSync:
			w.bgDone(r)
			continue
		case <-w.stop:
			w.shutdown()
			return
		default:
		}
		got := w.gather()
		w.flush()
		w.maybeSync()
		if got {
			continue // more may be ready: batch on
		}
		w.idle()
	}
}

// gather reads the source into the buffers, up to maxRound bytes; it reports whether it got any.
func (w *Writer) gather() bool {
	defer func() {
		w.mu.Lock()
		w.stats.BufferLength = int64(w.buffered())
		w.mu.Unlock()
	}()
	got := false
	w.adopt() // even when the buffers are full: a rewrite must not wait for the disk
	for w.buffered() < maxRound && !(w.errored() && w.buffered() >= w.cfg.MaxBuffer) {
		if w.lost {
			return got
		}
		ents, err := w.src.Next()
		w.adopt() // a rewrite registered before the entries past its point were appended
		if err != nil {
			w.loseFeed(err)
			return got
		}
		if len(ents) == 0 {
			return got
		}
		got = true
		for _, e := range ents {
			w.route(e)
		}
	}
	return got
}

func (w *Writer) buffered() int {
	n := len(w.cur.buf)
	if w.old != nil {
		n += len(w.old.buf)
	}
	return n
}

func (w *Writer) errored() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

func (w *Writer) loseFeed(err error) {
	w.lost = true
	w.cap.Store(w.durable.Load())
	if errors.Is(err, feed.ErrLost) {
		w.logf("The AOF writer fell behind the write feed: entries were lost; an AOF rewrite is needed")
	} else {
		w.logf("Error reading the write feed: %v; an AOF rewrite is needed", err)
	}
	if w.cfg.OnLost != nil {
		w.cfg.OnLost()
	}
}

// route appends one entry to the file it belongs to, with a SELECT when its database is not the
// file's current one.
func (w *Writer) route(e feed.Entry) {
	if e.Seq <= w.routed {
		return // already covered (a new source after ErrLost starts at the snapshot)
	}
	w.routed = e.Seq
	t := w.cur
	if rw := w.rw; rw != nil && e.Seq <= rw.at {
		if w.old == nil {
			return // after ErrLost: the base will hold it
		}
		t = w.old
	}
	if t.db != e.DB {
		t.buf = appendSelect(t.buf, e.DB)
		t.db = e.DB
	}
	t.buf = append(t.buf, e.Cmd...)
}

func appendSelect(b []byte, db int) []byte {
	s := strconv.Itoa(db)
	b = append(b, "*2\r\n$6\r\nSELECT\r\n$"...)
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	return append(b, "\r\n"...)
}

// flush writes the buffers (the old file first: its entries come first). A failed write sets
// the sticky error and is retried at most once a second.
func (w *Writer) flush() {
	if w.buffered() == 0 {
		if w.written < w.routed && !w.errored() {
			w.written = w.routed // entries dropped as covered by a base
		}
		return
	}
	if w.errored() && w.now().Before(w.retryAt) {
		return
	}
	for _, t := range []*target{w.old, w.cur} {
		if t == nil || len(t.buf) == 0 {
			continue
		}
		if err := w.writeTarget(t); err != nil {
			w.fail("Error writing to the AOF file", err)
			return
		}
	}
	w.written = w.routed
	w.retireOld()
	w.mu.Lock()
	w.stats.BufferLength = 0
	if w.oldest.IsZero() {
		w.oldest = w.now()
	}
	w.mu.Unlock()
	if w.cfg.Fsync != Always && !w.distrust {
		w.publish(w.written)
	}
}

// writeTarget writes t's buffer; a short write is cut back to the last good length, as Redis's
// flushAppendOnlyFile does, and when that fails the written part is kept.
func (w *Writer) writeTarget(t *target) error {
	t0 := time.Now()
	n, err := t.f.Write(t.buf)
	w.noteWrite(time.Since(t0))
	if err == nil && n < len(t.buf) {
		err = syscall.EIO
	}
	if err != nil {
		if n > 0 {
			if terr := t.f.Truncate(t.size); terr != nil {
				w.logf("Could not remove short write from the append-only file.  Redis may refuse "+
					"to load the AOF the next time it starts.  ftruncate: %s", Strerror(terr))
				t.size += int64(n)
				t.buf = t.buf[:copy(t.buf, t.buf[n:])]
				w.addSize(int64(n))
			}
			if errors.Is(err, syscall.EIO) && n < len(t.buf) {
				err = syscall.ENOSPC // a short write without an error is a full disk
			}
		}
		return err
	}
	t.size += int64(n)
	t.dirt = true
	w.addSize(int64(n))
	t.buf = t.buf[:0]
	return nil
}

// noteWrite reports a write(2)'s latency as Redis's flushAppendOnlyFile does: by what ran beside
// it, then as "aof-write".
func (w *Writer) noteWrite(d time.Duration) {
	if w.cfg.Latency == nil {
		return
	}
	switch {
	case w.bgSync != nil:
		w.cfg.Latency("aof-write-pending-fsync", d)
	case w.rw != nil:
		w.cfg.Latency("aof-write-active-child", d)
	default:
		w.cfg.Latency("aof-write-alone", d)
	}
	w.cfg.Latency("aof-write", d)
}

// stat is FS.Stat of a file whose size becomes aof_current_size, timed as "aof-fstat".
func (w *Writer) stat(path string) (int64, error) {
	t0 := time.Now()
	n, err := w.cfg.FS.Stat(path)
	if w.cfg.Latency != nil {
		w.cfg.Latency("aof-fstat", time.Since(t0))
	}
	return n, err
}

func (w *Writer) addSize(n int64) {
	w.mu.Lock()
	w.stats.CurrentSize += n
	w.mu.Unlock()
}

// fail enters the error state: writes are refused (Err), nothing more is durable until an fsync
// succeeds, and the loop retries in a second.
func (w *Writer) fail(what string, err error) {
	w.distrust = true
	w.retryAt = w.now().Add(time.Second)
	w.mu.Lock()
	first := w.err == nil
	w.err = err
	w.stats.LastWriteStatus = "err"
	w.mu.Unlock()
	if first {
		w.logf("%s: %s", what, Strerror(err))
	}
}

// maybeSync fsyncs as the policy says: always, every round with writes, before publishing;
// everysec, in the background once a second; no, never, except to recover from an error.
func (w *Writer) maybeSync() {
	if w.synced >= w.written {
		return
	}
	switch {
	case w.errored():
		if !w.now().Before(w.retryAt) {
			w.syncNow()
		}
	case w.cfg.Fsync == Always || w.distrust:
		w.syncNow()
	case w.cfg.Fsync == Everysec:
		if w.bgSync == nil && w.now().Sub(w.lastSync) >= time.Second {
			w.startBgSync()
		}
	}
}

// syncNow fsyncs every file written since its last fsync, on the loop.
func (w *Writer) syncNow() {
	if w.errored() && w.now().Before(w.retryAt) {
		return
	}
	w.waitBgSync()
	seq := w.written
	t0 := time.Now()
	for _, t := range []*target{w.old, w.cur} {
		if t == nil || !t.dirt {
			continue
		}
		if err := t.f.Sync(); err != nil {
			w.fail("Can't persist AOF for fsync error", err)
			return
		}
		t.dirt = false
	}
	if w.cfg.Latency != nil && w.cfg.Fsync == Always {
		w.cfg.Latency("aof-fsync-always", time.Since(t0))
	}
	w.markSynced(seq)
}

// markSynced records that every entry up to seq is fsynced.
func (w *Writer) markSynced(seq uint64) {
	w.lastSync = w.now()
	w.synced = max(w.synced, seq)
	w.mu.Lock()
	recovered := w.err != nil
	w.err = nil
	w.stats.LastWriteStatus = "ok"
	if w.synced >= w.written {
		w.oldest = time.Time{}
	}
	w.mu.Unlock()
	if recovered {
		w.logf("AOF write error looks solved, Redis can write again.")
	}
	if w.buffered() == 0 {
		w.distrust = false
	}
	w.publish(w.synced)
}

// startBgSync fsyncs the written files on another goroutine (Redis's bio fsync job).
func (w *Writer) startBgSync() {
	var files []File
	for _, t := range []*target{w.old, w.cur} {
		if t != nil && t.dirt {
			files = append(files, t.f)
			t.dirt = false
		}
	}
	seq := w.written
	ch := make(chan syncResult, 1)
	w.bgSync = ch
	w.lastSync = w.now()
	w.setPendingFsync(1)
	go func() {
		var err error
		for _, f := range files {
			if e := f.Sync(); e != nil && err == nil {
				err = e
			}
		}
		ch <- syncResult{seq: seq, err: err}
	}()
}

func (w *Writer) setPendingFsync(n int) {
	w.mu.Lock()
	w.stats.PendingBioFsync = n
	w.mu.Unlock()
}

// bgDone takes a background fsync's result.
func (w *Writer) bgDone(r syncResult) {
	w.bgSync = nil
	w.setPendingFsync(0)
	if r.err != nil {
		for _, t := range []*target{w.old, w.cur} {
			if t != nil {
				t.dirt = true
			}
		}
		w.fail("Error fsync'ing the AOF file", r.err)
		return
	}
	w.markSynced(r.seq)
}

// waitBgSync waits for a background fsync in flight, before a file is closed or synced here.
func (w *Writer) waitBgSync() {
	if w.bgSync != nil {
		w.bgDone(<-w.bgSync)
	}
}

// publish moves Durable to seq (never back, never past the cap) and wakes the waiters.
func (w *Writer) publish(seq uint64) {
	seq = min(seq, w.cap.Load())
	if seq <= w.durable.Load() {
		return
	}
	w.durable.Store(seq)
	w.mu.Lock()
	close(w.durCh)
	w.durCh = make(chan struct{})
	w.mu.Unlock()
}

// idle waits for a wake-up, an operation, a background fsync, the everysec deadline or the
// error retry; it never spins.
func (w *Writer) idle() {
	d := time.Duration(-1)
	switch {
	case w.errored():
		d = max(w.retryAt.Sub(w.now()), 10*time.Millisecond)
	case w.cfg.Fsync == Everysec && w.synced < w.written && w.bgSync == nil:
		d = time.Second - w.now().Sub(w.lastSync)
	}
	var tc <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(max(d, time.Millisecond))
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-w.wake:
	case f := <-w.ops:
		f()
	case r := <-w.bgSync:
		w.bgDone(r)
	case <-w.stop:
	case <-tc:
	}
}

// shutdown writes and fsyncs what is ready, ends a rewrite in progress and closes the files.
func (w *Writer) shutdown() {
	for i := 0; i < 64 && w.gather(); i++ {
		w.flush()
	}
	w.retryAt = time.Time{}
	w.flush()
	w.waitBgSync()
	w.retryAt = time.Time{}
	if w.synced < w.written {
		w.syncNow()
	}
	if w.rw != nil {
		w.endRewrite(w.rw, ErrClosed)
	}
	w.mu.Lock()
	if p := w.pending; p != nil {
		w.pending = nil
		p.err = ErrClosed
		close(p.adopted)
	}
	w.mu.Unlock()
	for _, t := range []*target{w.old, w.cur} {
		if t != nil {
			t.f.Close()
		}
	}
	w.closeErr = w.Err()
}

// Stats are the AOF fields of INFO persistence, as Redis names them.
type Stats struct {
	RewriteInProgress           bool   // aof_rewrite_in_progress
	LastRewriteTimeSec          int64  // aof_last_rewrite_time_sec (-1: none yet)
	CurrentRewriteTimeSec       int64  // aof_current_rewrite_time_sec (-1: none running)
	LastBgrewriteStatus         string // aof_last_bgrewrite_status: ok or err
	Rewrites                    int64  // aof_rewrites
	RewritesConsecutiveFailures int64  // aof_rewrites_consecutive_failures
	LastWriteStatus             string // aof_last_write_status: ok or err
	CurrentSize                 int64  // aof_current_size
	BaseSize                    int64  // aof_base_size
	BufferLength                int64  // aof_buffer_length
	PendingBioFsync             int    // aof_pending_bio_fsync
	DelayedFsync                int64  // aof_delayed_fsync: always 0, writes never wait for a background fsync
}

// ShouldRewrite is Redis's auto-aof-rewrite rule: the AOF is past minSize and has grown by
// percent or more over its base (percent 0 turns it off).
func (s Stats) ShouldRewrite(percent int, minSize int64) bool {
	if percent <= 0 || s.RewriteInProgress || s.CurrentSize <= minSize {
		return false
	}
	base := max(s.BaseSize, 1)
	return (s.CurrentSize*100/base)-100 >= int64(percent)
}

// Stats returns the INFO fields now.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	if s.RewriteInProgress && !w.rwStart.IsZero() {
		s.CurrentRewriteTimeSec = int64(w.now().Sub(w.rwStart) / time.Second)
	}
	return s
}

// isNotExist reports a missing file.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
