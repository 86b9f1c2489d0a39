package server

import (
	"strconv"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
)

// infoHook is Hooks.Info: the persistence section with Redis 7.0.15's fields in its order. It
// runs inside INFO, holding every shard's token.
func (s *Server) infoHook(section string, dst []byte) []byte {
	if section != "persistence" {
		return dst
	}
	w := infoLines{b: dst}
	loading := s.loading.Load()
	w.flag("loading", loading)
	w.int("async_loading", 0)
	bg := s.rdb.bg.Load()
	// A snapshot's copy-on-write cost is the bytes it holds: queued for the writer plus what the
	// shards copied (fork's would be the pages copied).
	sn, queued, running := s.Engine.SnapshotNow()
	var done, total int64
	if running {
		done, total = sn.Walked+sn.Copied, s.rdb.keysTotal.Load()
	}
	w.int("current_cow_peak", sn.PeakHeld)
	w.int("current_cow_size", queued)
	w.int("current_cow_size_age", 0)
	perc := 0.0
	if total > 0 {
		perc = float64(done) * 100 / float64(total)
	}
	w.str("current_fork_perc", strconv.FormatFloat(perc, 'f', 2, 64))
	w.int("current_save_keys_processed", done)
	w.int("current_save_keys_total", total)
	w.int("rdb_changes_since_last_save", s.dirtyHeld()-s.rdb.dirtyBase.Load())
	w.flag("rdb_bgsave_in_progress", bg)
	w.int("rdb_last_save_time", s.rdb.lastSave.Load())
	w.str("rdb_last_bgsave_status", okErr(s.rdb.lastOK.Load()))
	w.int("rdb_last_bgsave_time_sec", s.rdb.lastTimeSec.Load())
	cur := int64(-1)
	if t := s.rdb.bgStart.Load(); t != 0 {
		cur = int64(time.Duration(time.Now().UnixNano()-t) / time.Second)
	}
	w.int("rdb_current_bgsave_time_sec", cur)
	w.int("rdb_saves", s.rdb.saves.Load())
	w.int("rdb_last_cow_size", s.rdb.lastQueued.Load())
	w.int("rdb_last_load_keys_expired", s.rdb.loadExpired.Load())
	w.int("rdb_last_load_keys_loaded", s.rdb.loadLoaded.Load())
	r := s.aof.run.Load()
	st := aof.Stats{LastRewriteTimeSec: -1, CurrentRewriteTimeSec: -1, LastBgrewriteStatus: "ok",
		LastWriteStatus: "ok"}
	if r != nil {
		st = *s.aofStats(r)
	} else if last := s.aof.last.Load(); last != nil {
		st = *last
		st.RewriteInProgress, st.CurrentRewriteTimeSec = false, -1
	}
	// Redis's aof_state != AOF_OFF: BGREWRITEAOF under appendonly no writes the files with a
	// writer of its own, but the AOF stays off.
	on := r != nil && !s.aof.temporary.Load()
	w.flag("aof_enabled", on)
	// From BGREWRITEAOF's reply on, as Redis (its child exists by then): the writer learns of a
	// rewrite only at its snapshot instant, a little later.
	w.flag("aof_rewrite_in_progress", st.RewriteInProgress || s.aofRewriting())
	w.flag("aof_rewrite_scheduled", s.aof.scheduled.Load())
	w.int("aof_last_rewrite_time_sec", st.LastRewriteTimeSec)
	w.int("aof_current_rewrite_time_sec", st.CurrentRewriteTimeSec)
	w.str("aof_last_bgrewrite_status", st.LastBgrewriteStatus)
	w.int("aof_rewrites", st.Rewrites)
	w.int("aof_rewrites_consecutive_failures", st.RewritesConsecutiveFailures)
	w.str("aof_last_write_status", st.LastWriteStatus)
	w.int("aof_last_cow_size", s.aof.lastCow.Load())
	w.int("module_fork_in_progress", 0)
	w.int("module_fork_last_cow_size", 0)
	if on {
		w.int("aof_current_size", st.CurrentSize)
		w.int("aof_base_size", st.BaseSize)
		w.int("aof_pending_rewrite", 0)
		w.int("aof_buffer_length", st.BufferLength)
		w.int("aof_pending_bio_fsync", int64(st.PendingBioFsync))
		w.int("aof_delayed_fsync", st.DelayedFsync)
	}
	if loading {
		s.load.info(&w)
	}
	return w.b
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}

// infoLines appends INFO's "field:value\r\n" lines.
type infoLines struct{ b []byte }

func (w *infoLines) str(k, v string) {
	w.b = append(append(append(append(w.b, k...), ':'), v...), "\r\n"...)
}

func (w *infoLines) int(k string, v int64) { w.str(k, strconv.FormatInt(v, 10)) }

func (w *infoLines) flag(k string, v bool) {
	if v {
		w.int(k, 1)
	} else {
		w.int(k, 0)
	}
}
