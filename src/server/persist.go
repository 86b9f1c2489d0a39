package server

// RDB files in the server (issue 17 item 1): SAVE, BGSAVE [SCHEDULE], LASTSAVE, the save rules
// in the cron, stop-writes-on-bgsave-error and the INFO persistence section.
//
// File protocol: a snapshot is written by Engine.WriteRDB to <dir>/temp-<pid>.rdb, fsynced,
// renamed onto <dir>/<dbfilename>, and the directory is fsynced, so a crash at any point leaves
// the previous file or the new one, whole. Every file goes through aof.FS (CrashFS in tests).
//
// Ordering invariants:
//
//  1. One snapshot at a time: SAVE and BGSAVE take rdb.busy; BGSAVE while an AOF rewrite runs
//     fails, or with SCHEDULE waits for it (rdb_bgsave_scheduled, started by the cron).
//  2. The dirty counter's baseline moves only when a save succeeded, to the count read at the
//     snapshot's start: changes made during a BGSAVE still count after it (Redis's
//     dirty_before_bgsave).
//  3. After a failed BGSAVE the save rules wait CONFIG_BGSAVE_RETRY_DELAY (5 s) before trying
//     again, and while it stays failed with save rules set (and stop-writes-on-bgsave-error)
//     writes get MISCONF.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/src/command"
	"github.com/hotkv/hotkv/src/config"
)

// bgsaveRetryDelay is Redis's CONFIG_BGSAVE_RETRY_DELAY.
const bgsaveRetryDelay = 5 * time.Second

// Redis's replies for the RDB commands.
var (
	errBgsaveRunning  = command.ErrSnapshotRunning
	errRewriteRunning = command.ErrAOFRewriteRunning
	errBgsaveBlocked  = command.ErrChildActive
)

// rdbState is the RDB side of persistence. Counters are atomics: INFO reads them while a save
// runs.
type rdbState struct {
	busy      sync.Mutex // held by the one snapshot running (SAVE, BGSAVE, DEBUG RELOAD)
	bg        atomic.Bool
	scheduled atomic.Bool

	lastSave    atomic.Int64 // rdb_last_save_time (unix seconds)
	lastTry     atomic.Int64 // unix nanos of the last bgsave attempt
	lastOK      atomic.Bool  // rdb_last_bgsave_status
	lastTimeSec atomic.Int64 // rdb_last_bgsave_time_sec
	bgStart     atomic.Int64 // unix nanos; 0 when no bgsave runs
	saves       atomic.Int64
	dirtyBase   atomic.Int64 // server.dirty at the last successful save
	lastQueued  atomic.Int64 // rdb_last_cow_size: the last save's peak held snapshot bytes
	keysTotal   atomic.Int64 // current_save_keys_total
	misconf     atomic.Bool
	cancel      atomic.Pointer[context.CancelFunc] // aborts the snapshot being written

	loadExpired atomic.Int64 // rdb_last_load_keys_expired
	loadLoaded  atomic.Int64 // rdb_last_load_keys_loaded
}

func (r *rdbState) inProgress() bool { return r.bg.Load() }

// rdbPath is <dir>/<dbfilename>.
func (s *Server) rdbPath() string { return filepath.Join(s.dataDir, s.cfg.String("dbfilename")) }

// saveRDB writes a point-in-time RDB file (the file protocol above). The caller holds
// rdb.busy.
func (s *Server) saveRDB() (err error) {
	fsys, dir := s.aof.fs, s.dataDir
	tmp := filepath.Join(dir, "temp-"+strconv.Itoa(os.Getpid())+".rdb")
	dirty := s.dirty()
	f, err := fsys.Create(tmp)
	if err != nil {
		s.log.Warn(fmt.Sprintf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %s",
			filepath.Base(tmp), dir, aof.Strerror(err)))
		return err
	}
	defer func() {
		if err != nil {
			t0 := time.Now()
			fsys.Remove(tmp)
			s.Engine.LatencyEvent("rdb-unlink-temp-file", time.Since(t0)) // Redis's rdbRemoveTempFile
		}
	}()
	st, err := s.writeRDB(&fileWriter{f: f}, s.rdbOptions(), &s.rdb)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.log.Warn("Write error saving DB on disk: " + aof.Strerror(err))
		return err
	}
	if err = fsys.Rename(tmp, s.rdbPath()); err != nil {
		s.log.Warn(fmt.Sprintf("Error moving temp DB file %s on the final destination %s (in server root dir %s): %s",
			filepath.Base(tmp), s.cfg.String("dbfilename"), dir, aof.Strerror(err)))
		return err
	}
	if err = fsys.SyncDir(dir); err != nil {
		s.log.Warn("Failed to fsync directory while saving DB: " + aof.Strerror(err))
		return err
	}
	s.rdb.dirtyBase.Store(dirty)
	s.rdb.lastSave.Store(time.Now().Unix())
	s.rdb.saves.Add(1)
	s.rdb.lastQueued.Store(st.peakQueued)
	s.log.Info("DB saved on disk", "keys", st.keys, "bytes", st.bytes)
	return nil
}

// fileWriter adapts aof.File to io.Writer for the encoder.
type fileWriter struct{ f aof.File }

func (w *fileWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

var _ io.Writer = (*fileWriter)(nil)

// save is SAVE: a snapshot on the caller's goroutine (Redis blocks the server; HotKV only the
// caller, since the snapshot is point-in-time without stopping writes).
func (s *Server) save() error {
	if s.rdb.bg.Load() {
		return errBgsaveRunning
	}
	s.rdb.busy.Lock()
	defer s.rdb.busy.Unlock()
	err := s.saveRDB()
	s.noteSaveResult(err, false)
	return err
}

// bgsave is BGSAVE [SCHEDULE]: the snapshot on a goroutine of its own. scheduled reports that it
// was left for the cron to start once the AOF rewrite ends.
func (s *Server) bgsave(schedule bool) (scheduled bool, err error) {
	if s.rdb.bg.Load() {
		return false, errBgsaveRunning
	}
	if s.aofRewriting() {
		if !schedule {
			return false, errBgsaveBlocked
		}
		s.rdb.scheduled.Store(true)
		return true, nil
	}
	if !s.rdb.busy.TryLock() {
		return false, errBgsaveRunning
	}
	s.startBgsave()
	return false, nil
}

// startBgsave runs the background save; the caller holds rdb.busy, which it releases.
func (s *Server) startBgsave() {
	s.rdb.bg.Store(true)
	s.rdb.lastTry.Store(time.Now().UnixNano())
	s.rdb.bgStart.Store(time.Now().UnixNano())
	s.log.Info("Background saving started")
	s.bgWork.Add(1)
	go func() {
		defer s.bgWork.Done()
		defer s.rdb.busy.Unlock()
		t0 := time.Now()
		err := s.saveRDB()
		s.rdb.lastTimeSec.Store(int64(time.Since(t0) / time.Second))
		s.rdb.bgStart.Store(0)
		s.rdb.bg.Store(false)
		s.noteSaveResult(err, true)
		if err == nil {
			s.log.Info("Background saving terminated with success")
		} else {
			s.log.Warn("Background saving error", "err", err)
		}
	}()
}

// noteSaveResult records rdb_last_bgsave_status and sets or clears the MISCONF gate (invariant
// 3). As Redis's rdbSave, a foreground save that succeeds sets the status ok and one that fails
// leaves it.
func (s *Server) noteSaveResult(err error, background bool) {
	if background || err == nil {
		s.rdb.lastOK.Store(err == nil)
	}
	s.updateRDBGate()
}

// updateRDBGate is Redis's writeCommandsDeniedByDiskError for the RDB: writes are refused while
// the last bgsave failed, save rules exist and stop-writes-on-bgsave-error is yes.
func (s *Server) updateRDBGate() {
	deny := !s.rdb.lastOK.Load() && len(s.cfg.Current().Save) > 0 && s.cfg.Bool("stop-writes-on-bgsave-error")
	if s.rdb.misconf.Swap(deny) != deny {
		if deny {
			s.setWriteError(writeErrRDB, "the last background save failed")
		} else {
			s.setWriteError(writeErrRDB, "")
		}
	}
}

// saveCron is serverCron's save rule check: a BGSAVE when some rule's seconds have passed since
// the last save with at least its changes, and, after a failed one, not before the retry delay.
func (s *Server) saveCron() {
	if s.rdb.scheduled.Load() && !s.aofRewriting() && !s.rdb.bg.Load() {
		if s.rdb.busy.TryLock() {
			s.rdb.scheduled.Store(false)
			s.startBgsave()
		}
		return
	}
	rules := s.cfg.Current().Save
	if len(rules) == 0 || s.rdb.bg.Load() || s.aofRewriting() || s.loading.Load() {
		return
	}
	now := time.Now()
	changes := s.dirty() - s.rdb.dirtyBase.Load()
	elapsed := now.Unix() - s.rdb.lastSave.Load()
	retryOK := s.rdb.lastOK.Load() || now.UnixNano()-s.rdb.lastTry.Load() > int64(bgsaveRetryDelay)
	if p, ok := firingRule(rules, changes, elapsed); ok && retryOK {
		if !s.rdb.busy.TryLock() {
			return
		}
		s.log.Info(fmt.Sprintf("%d changes in %d seconds. Saving...", p.Changes, p.Seconds))
		s.startBgsave()
	}
}

// firingRule returns the first save rule met: at least its changes, and its seconds elapsed.
func firingRule(rules []config.SaveParam, changes, elapsed int64) (config.SaveParam, bool) {
	for _, p := range rules {
		if changes >= int64(p.Changes) && elapsed > p.Seconds {
			return p, true
		}
	}
	return config.SaveParam{}, false
}

// lastSave is LASTSAVE.
func (s *Server) lastSave() int64 { return s.rdb.lastSave.Load() }

// waitBgsave waits for the snapshot running now (a save or a rewrite) to end.
func (s *Server) waitBgsave() {
	s.rdb.busy.Lock()
	s.rdb.busy.Unlock() // only waiting for the holder to finish
}
