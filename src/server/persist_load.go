package server

// Loading at start (issue 17): with appendonly yes the AOF (persist/aof Load: an RDB base through
// Engine.LoadRDB, commands through a fake client), else the RDB file if there is one. The server
// listens first and answers -LOADING until the load ends (Engine.SetLoading); progress is logged
// every second and shown in INFO's loading_* fields. A corrupt file ends startup with Redis's
// message.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/command"
)

// loadState is what INFO shows while loading.
type loadState struct {
	mu     sync.Mutex
	start  time.Time
	total  int64
	loaded int64
	keys   int64
}

func (l *loadState) begin(total int64) {
	l.mu.Lock()
	l.start, l.total, l.loaded, l.keys = time.Now(), total, 0, 0
	l.mu.Unlock()
}

func (l *loadState) progress(loaded, keys int64) {
	l.mu.Lock()
	l.loaded, l.keys = max(l.loaded, loaded), max(l.keys, keys)
	l.mu.Unlock()
}

// info writes Redis's loading_* fields.
func (l *loadState) info(w *infoLines) {
	l.mu.Lock()
	defer l.mu.Unlock()
	perc, eta := 0.0, int64(1)
	if l.total > 0 {
		perc = float64(l.loaded) * 100 / float64(l.total)
	}
	if el := time.Since(l.start).Seconds(); l.loaded > 0 && el > 0 {
		eta = int64(float64(l.total-l.loaded) / (float64(l.loaded) / el))
	}
	w.int("loading_start_time", l.start.Unix())
	w.int("loading_total_bytes", l.total)
	w.int("loading_rdb_used_mem", 0)
	w.int("loading_loaded_bytes", l.loaded)
	w.str("loading_loaded_perc", strconv.FormatFloat(perc, 'f', 2, 64))
	w.int("loading_eta_seconds", eta)
}

// logger logs the progress once a second until stop is closed.
func (l *loadState) logger(s *Server, stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			l.mu.Lock()
			el := time.Since(l.start).Seconds()
			perc := 0.0
			if l.total > 0 {
				perc = float64(l.loaded) * 100 / float64(l.total)
			}
			keys, rate := l.keys, float64(l.keys)/max(el, 1e-9)
			l.mu.Unlock()
			s.log.Info("Loading the dataset", "keys", keys, "percent", fmt.Sprintf("%.2f", perc),
				"keys_per_sec", int64(rate))
		}
	}
}

// loadTestDelay, set by tests only, is slept before each applied command or loaded chunk, so
// that a test observes -LOADING.
var loadTestDelay time.Duration

// loadData is the start-up load. It returns an error for a file that cannot be loaded, which
// ends the start (Redis exits).
func (s *Server) loadData() error {
	if s.cfg.Bool("appendonly") {
		return s.loadAOF()
	}
	return s.loadRDBFile()
}

// hasData reports whether loadData has anything to read, so that a server with no files starts
// without a loading phase.
func (s *Server) hasData() bool {
	if s.cfg.Bool("appendonly") {
		fn := s.cfg.String("appendfilename")
		_, err1 := s.aof.fs.Stat(s.aofDir() + "/" + aof.ManifestName(fn))
		_, err2 := s.aof.fs.Stat(s.dataDir + "/" + fn)
		return err1 == nil || err2 == nil
	}
	_, err := s.aof.fs.Stat(s.rdbPath())
	return err == nil
}

// loadRDBFile loads <dir>/<dbfilename> when it exists.
func (s *Server) loadRDBFile() error {
	path := s.rdbPath()
	size, err := s.aof.fs.Stat(path)
	if err != nil {
		return nil // no file: an empty data set, as Redis starts
	}
	f, err := s.aof.fs.Open(path)
	if err != nil {
		return fmt.Errorf("Fatal error loading the DB: %s. Exiting.", aof.Strerror(err))
	}
	defer f.Close()
	s.load.begin(size)
	t0 := time.Now()
	st, err := s.loadRDB(&countingReader{r: f, s: s}, size, false,
		func(p command.LoadProgress) { s.load.progress(p.Bytes, p.Keys) })
	if errors.Is(err, errNoRDB) {
		s.log.Warn("RDB file not loaded: this build cannot read RDB files", "file", path)
		return nil
	}
	if err != nil {
		s.log.Error("Fatal error loading the DB, check server logs. Exiting.", "err", err)
		return fmt.Errorf("cannot load %s: %w", path, err)
	}
	s.rdb.loadLoaded.Store(st.loaded)
	s.rdb.loadExpired.Store(st.expired)
	s.log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d, keys expired: %d.", st.loaded, st.expired))
	s.log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(t0).Seconds()))
	return nil
}

// countingReader tells the load state how many bytes were read.
type countingReader struct {
	r io.Reader
	n int64
	s *Server
}

func (c *countingReader) Read(p []byte) (int, error) {
	if loadTestDelay > 0 {
		time.Sleep(loadTestDelay)
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.s.load.progress(c.n, 0)
	return n, err
}

// loadAOF loads the AOF directory. The writer is opened afterwards (openAOF), on the manifest
// Load returned.
func (s *Server) loadAOF() error {
	fn := s.cfg.String("appendfilename")
	s.load.begin(0)
	t0 := time.Now()
	fc := s.newFakeClient()
	defer fc.close()
	opts := aof.LoadOptions{Truncated: s.cfg.Bool("aof-load-truncated"),
		Progress: func(read, total int64) {
			s.load.mu.Lock()
			s.load.total = total
			s.load.mu.Unlock()
			s.load.progress(read, fc.commands)
		},
		Logf: func(format string, args ...any) { s.log.Warn(fmt.Sprintf(format, args...)) }}
	loadBase := func(r io.Reader, isRDB bool) error {
		if err := fc.flush(); err != nil {
			return err
		}
		st, err := s.loadRDB(r, 0, true, func(p command.LoadProgress) { s.load.progress(0, p.Keys) })
		s.rdb.loadLoaded.Store(st.loaded)
		s.rdb.loadExpired.Store(st.expired)
		return err
	}
	res, err := aof.Load(s.aof.fs, s.aofDir(), fn, loadBase, fc.apply, opts)
	if err == nil {
		err = fc.flush()
	}
	if err != nil {
		var fe *aof.FormatError
		switch {
		case errors.As(err, &fe):
			s.log.Error(err.Error() + ". Exiting.")
		case errors.Is(err, aof.ErrTruncated):
			s.log.Error(err.Error() + ". You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.")
		default:
			s.log.Error("Fatal error loading the append only file", "err", err)
		}
		return fmt.Errorf("cannot load the append only file: %w", err)
	}
	s.aofManifest = res.Manifest
	if res.Manifest != nil {
		s.log.Info(fmt.Sprintf("DB loaded from append only file: %.3f seconds", time.Since(t0).Seconds()),
			"commands", res.Commands, "truncated", res.Truncated)
	}
	return nil
}

// fakeClient replays AOF commands through the normal parse, route and execute path: a
// pipeline.Conn over an in-memory stream, as Redis's fake client runs them, in batches.
type fakeClient struct {
	s        *Server
	mem      *memStream
	pc       *pipeline.Conn
	db       int
	pending  int
	commands int64
	release  func()
}

// fakeBatch bounds the bytes gathered before they are run.
const fakeBatch = 256 << 10

func (s *Server) newFakeClient() *fakeClient {
	mem := &memStream{}
	cl := s.Engine.NewClient("", "", func() {})
	s.markLoader(cl)
	return &fakeClient{s: s, mem: mem, pc: pipeline.NewConn(s.env, mem, cl),
		release: func() { s.markLoader(nil); s.Engine.RemoveClient(cl) }}
}

func (f *fakeClient) close() { f.release() }

// apply is Load's apply: SELECT where the database changes, then the command, run once enough
// is gathered.
func (f *fakeClient) apply(db int, argv [][]byte) error {
	if db != f.db {
		f.mem.buf = appendCommand(f.mem.buf, []byte("SELECT"), []byte(strconv.Itoa(db)))
		f.db = db
	}
	f.mem.buf = appendCommand(f.mem.buf, argv...)
	f.commands++
	if loadTestDelay > 0 {
		time.Sleep(loadTestDelay)
	}
	if f.pending++; len(f.mem.buf) >= fakeBatch || loadTestDelay > 0 {
		return f.flush()
	}
	return nil
}

// flush runs what is gathered. A command Redis's loader would stop at (an unknown one) stops
// the load with its message.
func (f *fakeClient) flush() error {
	if f.mem.Len() == 0 {
		return nil
	}
	err := f.pc.Serve()
	f.mem.buf, f.mem.off, f.pending = f.mem.buf[:0], 0, 0
	if err != nil {
		return fmt.Errorf("cannot replay the append only file: %w", err)
	}
	if f.mem.unknown != "" {
		return errors.New(f.mem.unknown)
	}
	return nil
}

func appendCommand(b []byte, args ...[]byte) []byte {
	b = resp.AppendArrayLen(b, len(args))
	for _, a := range args {
		b = resp.AppendBulk(b, a)
	}
	return b
}

// memStream is pipeline.Stream over a byte slice; replies are dropped but for an unknown
// command, which is remembered.
type memStream struct {
	buf     []byte
	off     int
	unknown string
}

func (m *memStream) Len() int { return len(m.buf) - m.off }

func (m *memStream) Peek(n int) ([]byte, error) {
	if n > m.Len() {
		return nil, io.ErrUnexpectedEOF
	}
	return m.buf[m.off : m.off+n], nil
}

func (m *memStream) Skip(n int) error { m.off += n; return nil }
func (m *memStream) Release() error   { return nil }
func (m *memStream) Inline() bool     { return false }
func (m *memStream) Fill() bool       { return false }

func (m *memStream) Write(p []byte) error {
	if m.unknown == "" {
		if i := bytes.Index(p, []byte("-ERR unknown command")); i >= 0 {
			end := bytes.IndexByte(p[i:], '\r')
			m.unknown = "Unknown command reading the append only file: " + string(p[i+1:i+max(end, 1)])
		}
	}
	return nil
}

var _ pipeline.Stream = (*memStream)(nil)
