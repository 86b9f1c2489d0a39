package server

import (
	"errors"
	"os"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/src/command"
)

// initPersistence sets the persistence state of a new server (before the engine exists).
func (s *Server) initPersistence() {
	s.aof.fs = aof.OSFS{}
	s.dataDir = s.cfg.String("dir")
	if s.dataDir == "" {
		s.dataDir, _ = os.Getwd()
	}
	s.rdb.lastOK.Store(true)
	s.rdb.lastTimeSec.Store(-1)
	s.rdb.lastSave.Store(time.Now().Unix())
}

// persistenceHooks registers the configuration hooks persistence follows.
func (s *Server) persistenceHooks() {
	s.cfg.OnApply("appendonly", s.applyAppendOnly)
	s.cfg.OnChange("appendfsync", func(string) { s.applyFsync() })
	for _, name := range []string{"save", "stop-writes-on-bgsave-error"} {
		s.cfg.OnChange(name, func(string) { s.updateRDBGate() })
	}
}

// startLoad loads the data set: at once when there is nothing to read, else on a goroutine
// while the server answers -LOADING. The AOF writer opens after the load, on what it found.
func (s *Server) startLoad() {
	if !s.hasData() {
		s.finishLoad()
		return
	}
	s.setLoading(true)
	s.log.Info("Loading the dataset from disk")
	go s.finishLoad()
}

func (s *Server) finishLoad() {
	stop := make(chan struct{})
	if s.loading.Load() {
		go s.load.logger(s, stop)
	}
	err := s.loadData()
	close(stop)
	if err == nil && s.cfg.Bool("appendonly") {
		s.aof.mu.Lock()
		err = s.openAOF(s.aofManifest, false)
		s.aof.mu.Unlock()
		if err != nil {
			s.log.Error("Can't open the append-only file", "err", err)
		}
	}
	s.rdb.dirtyBase.Store(s.dirty())
	s.loadErr = err
	if err != nil {
		// The gate stays shut until Stop closes the connections: as Redis, which exits, a
		// failed load serves nothing, not even a PONG from the empty dataset it left.
		close(s.loaded)
		go s.Stop()
		return
	}
	s.setLoading(false)
	close(s.loaded) // after the gate opened: a test that waited for it sees no -LOADING
}

func (s *Server) setLoading(on bool) {
	s.loading.Store(on)
	s.cfg.SetLoading(on)
	s.engineLoading(on)
}

// Loaded is closed once the start-up load ended; LoadErr is its error then.
func (s *Server) Loaded() <-chan struct{} { return s.loaded }

// LoadErr is the start-up load's error, valid once Loaded is closed.
func (s *Server) LoadErr() error { <-s.loaded; return s.loadErr }

// errShutdown is Redis's reply when SHUTDOWN cannot save.
var errShutdown = errors.New("ERR Errors trying to SHUTDOWN. Check logs.")

// shutdownCommand serves SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE].
func (s *Server) shutdownCommand(save, nosave, now, force bool) error {
	s.log.Warn("User requested shutdown...")
	return s.shutdown(save, nosave, now, force)
}

// shutdown is Redis's prepareForShutdown: the AOF is written and fsynced, and an RDB is saved
// when save rules exist (or SAVE) unless NOSAVE; a failed save refuses to stop unless FORCE.
func (s *Server) shutdown(save, nosave, now, force bool) error {
	_ = now // no replicas to wait for
	if s.loading.Load() {
		go s.Stop()
		return nil
	}
	if c := s.rdb.cancel.Load(); c != nil { // Redis kills the saving child
		if s.aofRewriting() {
			s.log.Warn("There is a child rewriting the AOF. Killing it!")
		} else {
			s.log.Warn("There is a child saving an .rdb. Killing it!")
		}
		(*c)()
	}
	if r := s.aof.run.Load(); r != nil {
		s.log.Info("Calling fsync() on the AOF file.")
		if err := r.w.WaitDurable(s.Engine.Feed.Seq(), 5*time.Second); err != nil && !force {
			s.log.Warn("Error fsyncing the AOF on shutdown, can't exit.", "err", err)
			return errShutdown
		}
	}
	if (len(s.cfg.Current().Save) > 0 && !nosave) || save {
		s.log.Info("Saving the final RDB snapshot before exiting.")
		s.rdb.busy.Lock()
		err := s.saveRDB()
		s.rdb.busy.Unlock()
		s.noteSaveResult(err, false)
		if err != nil {
			if !force {
				s.log.Warn("Error trying to save the DB, can't exit.")
				return errShutdown
			}
			s.log.Warn("Error trying to save the DB. Exit anyway.")
		}
	}
	s.log.Warn("Redis is now ready to exit, bye bye...")
	go s.Stop()
	return nil
}

// debugReload is DEBUG RELOAD: save (unless nosave), empty the data set and the function
// libraries as Redis's emptyData does (unless noflush, with FLUSHALL and FUNCTION FLUSH through a
// fake client, which takes every token), load the file back (merge: its keys replace those
// present). Other clients get -LOADING from the flush to the end of the load, as Redis's rdbLoad
// answers the clients it serves while it loads. The FLUSHALL reaches the AOF and the loaded keys
// do not, so with the AOF on a rewrite follows before the reply.
func (s *Server) debugReload(merge, noflush, nosave bool) error {
	if !nosave {
		if err := s.save(); err != nil {
			return command.ReplyError("ERR")
		}
	}
	s.setLoading(true)
	err := s.reloadRDB(merge, noflush)
	s.setLoading(false)
	if err != nil {
		return err
	}
	s.log.Warn("DB reloaded by DEBUG RELOAD")
	if s.aof.run.Load() != nil {
		if err := s.rewriteAOF(); err != nil {
			s.log.Warn("AOF rewrite after DEBUG RELOAD failed", "err", err)
		}
	}
	return nil
}

// reloadRDB is DEBUG RELOAD's flush and load, behind the -LOADING gate (the fake client is
// exempt from it).
func (s *Server) reloadRDB(merge, noflush bool) error {
	if !noflush {
		fc := s.newFakeClient()
		fc.mem.buf = appendCommand(fc.mem.buf, []byte("FLUSHALL"))
		// Redis's emptyData drops the function libraries too; the file brings them back.
		fc.mem.buf = appendCommand(fc.mem.buf, []byte("FUNCTION"), []byte("FLUSH"))
		err := fc.flush()
		fc.close()
		if err != nil {
			return err
		}
	}
	f, err := s.aof.fs.Open(s.rdbPath())
	if err != nil {
		s.log.Warn("Error trying to load the RDB dump", "err", err)
		return errors.New("load failed")
	}
	defer f.Close()
	st, err := s.Engine.LoadRDB(f, command.LoadOptions{Replace: merge})
	if err != nil {
		s.log.Warn("Error trying to load the RDB dump", "err", err)
		return err
	}
	s.rdb.loadLoaded.Store(st.Keys)
	s.rdb.loadExpired.Store(st.Expired)
	return nil
}
