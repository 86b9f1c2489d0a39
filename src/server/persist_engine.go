package server

// The calls persistence makes into the command engine, in one place.

import (
	"errors"
	"io"

	"github.com/hotkv/hotkv/src/command"
)

// Kinds of write errors behind the MISCONF gate.
const (
	writeErrRDB = iota
	writeErrAOF
)

// rdbStats are what a save or a load reports.
type rdbStats struct {
	keys, bytes     int64
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
}

func (s *Server) rdbOptions() rdbOpts {
	return rdbOpts{compression: s.cfg.Bool("rdbcompression"), checksum: s.cfg.Bool("rdbchecksum")}
}

var errNoRDB = errors.New("RDB files are not available in this build")

// writeRDB writes a point-in-time snapshot as an RDB stream, reporting progress into st.
func (s *Server) writeRDB(w io.Writer, o rdbOpts, st *rdbState) (rdbStats, error) {
	if testWriteRDB != nil {
		return testWriteRDB(s, w, o)
	}
	return rdbStats{}, errNoRDB
}

// testWriteRDB, set by tests only, stands in for the engine's RDB writer.
var testWriteRDB func(s *Server, w io.Writer, o rdbOpts) (rdbStats, error)

// loadRDB loads an RDB stream into the (empty) engine.
func (s *Server) loadRDB(r io.Reader, progress func(keys int64)) (rdbStats, error) {
	return rdbStats{}, errNoRDB
}

// dirty is Redis's server.dirty; dirtyHeld is it from inside INFO (every token held).
func (s *Server) dirty() int64     { return s.Engine.Dirty(false) }
func (s *Server) dirtyHeld() int64 { return s.Engine.Dirty(true) }

// setWriteError sets (text not empty) or clears the MISCONF gate of one kind.
func (s *Server) setWriteError(kind int, text string) {
	s.writeErr[kind].Store(&text)
}

// markLoader exempts the AOF loader's fake client from the -LOADING gate.
func markLoader(cl *command.Client) {}

// engineLoading turns the -LOADING gate on or off.
func (s *Server) engineLoading(on bool) {}
