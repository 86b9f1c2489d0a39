package server

// The calls persistence makes into the command engine, in one place.

import (
	"context"
	"errors"
	"io"

	"github.com/hotkv/hotkv/src/command"
)

// Kinds of write errors behind the MISCONF gate.
const (
	writeErrRDB = int(command.WriteErrRDB)
	writeErrAOF = int(command.WriteErrAOF)
)

// rdbStats are what a save or a load reports.
type rdbStats struct {
	keys, bytes     int64
	skipped         int64 // keys of HotKV's own types left out (redis70)
	peakQueued      int64
	loaded, expired int64
}

// rdbOpts are the RDB settings a save uses.
type rdbOpts struct {
	compression, checksum bool
	aofBase               bool // the aof-base aux field
	// instant, when set, runs once the snapshot's instant is fixed, with the feed sequence number
	// the image holds (an AOF rewrite registers there); an error aborts the save.
	instant func(seq uint64) error
	repl    *command.ReplInfo // the repl-* aux fields, read after instant (a replica's full sync)
	redis70 bool              // only what Redis 7.0 loads (a replica without capa hotkv)
}

func (s *Server) rdbOptions() rdbOpts {
	return rdbOpts{compression: s.cfg.Bool("rdbcompression"), checksum: s.cfg.Bool("rdbchecksum")}
}

var errNoRDB = errors.New("RDB files are not available in this build")

// testWriteRDB, set by tests only, stands in for the engine's RDB writer.
var testWriteRDB func(s *Server, w io.Writer, o rdbOpts) (rdbStats, error)

// writeRDB writes a point-in-time snapshot as an RDB stream (Engine.WriteRDB), reporting its
// progress into st. Stop cancels it.
func (s *Server) writeRDB(w io.Writer, o rdbOpts, st *rdbState) (rdbStats, error) {
	if testWriteRDB != nil {
		return testWriteRDB(s, w, o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st.cancel.Store(&cancel)
	defer st.cancel.Store(nil)
	go func() {
		select {
		case <-s.stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	opts := command.RDBOptions{Compress: o.compression, Checksum: o.checksum, AOFBase: o.aofBase,
		Instant: o.instant, Repl: o.repl, Redis70: o.redis70,
		Progress: func(p command.RDBProgress) {
			st.keysTotal.Store(p.Keys)
		}}
	rs, err := s.Engine.WriteRDB(ctx, w, opts)
	st.keysTotal.Store(0)
	return rdbStats{keys: rs.Keys, bytes: rs.Bytes, peakQueued: rs.Snapshot.PeakHeld, skipped: rs.Skipped}, err
}

// loadRDB loads an RDB stream into the engine (size 0 when unknown; an AOF base keeps keys
// already expired, as Redis loads a preamble).
func (s *Server) loadRDB(r io.Reader, size int64, aofBase bool, progress func(command.LoadProgress)) (rdbStats, error) {
	st, err := s.Engine.LoadRDB(r, command.LoadOptions{KeepExpired: aofBase, Size: size,
		Progress: progress, ProgressKeys: 10_000})
	return rdbStats{loaded: st.Keys, expired: st.Expired, bytes: st.Bytes}, err
}

// dirty is Redis's server.dirty; dirtyHeld is it from inside INFO (every token held).
func (s *Server) dirty() int64     { return s.Engine.Dirty(false) }
func (s *Server) dirtyHeld() int64 { return s.Engine.Dirty(true) }

// setWriteError sets (cause not empty) or clears the MISCONF gate of one kind; for the AOF
// cause is the error's strerror text.
func (s *Server) setWriteError(kind int, cause string) {
	s.writeErr[kind].Store(&cause)
	s.Engine.SetWriteError(command.WriteErrKind(kind), cause)
}

// engineLoading turns the -LOADING gate on or off.
func (s *Server) engineLoading(on bool) { s.Engine.SetLoading(on) }

// markLoader exempts the AOF loader's fake client from the -LOADING gate.
func (s *Server) markLoader(cl *command.Client) { s.Engine.ExemptFromLoading(cl) }

// persistHooks fills the engine's persistence hooks.
func (s *Server) persistHooks() {
	h := &s.Engine.Hooks
	h.Save = s.save
	h.BGSave = s.bgsave
	h.LastSave = s.lastSave
	h.BGRewriteAOF = s.bgRewriteAOF
	h.DebugReload = s.debugReload
}
