package aof

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// LoadOptions are the loader's settings and hooks.
type LoadOptions struct {
	// Truncated is aof-load-truncated (Redis's default is yes): a command cut short at the end of
	// the last file is dropped and the file truncated to the last whole command.
	Truncated bool
	// Progress, if set, is called now and then with the bytes read so far and the total.
	Progress func(read, total int64)
	// Logf, if set, receives Redis's log lines (warnings about truncation and reverted MULTI).
	Logf func(format string, args ...any)
}

// LoadResult says what Load found.
type LoadResult struct {
	Manifest  *Manifest // nil when there was no AOF at all
	Commands  int64     // commands applied, SELECT included
	Truncated bool      // the last file's tail was cut
	TotalSize int64     // bytes of the base and INCR files: INFO's aof_current_size after loading
	BaseSize  int64     // aof_base_size
	Upgraded  bool      // an old single-file AOF was moved into the directory
}

// FormatError is a command stream that is not the AOF format (Redis's "Bad file format").
type FormatError struct {
	File   string
	Offset int64 // where the bad command starts
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("Bad file format reading the append only file %s at offset %d: %s", e.File, e.Offset, e.Msg)
}

// ErrTruncated is wrapped by the error Load returns when a file ends inside a command and
// truncation is not allowed (or the file is not the last one).
var ErrTruncated = errors.New("Unexpected end of file reading the append only file")

// lineMax is Redis's AOF_ANNOTATION_LINE_MAX_LEN: the loader reads lines with fgets of this size.
const lineMax = 1024

// chunk bounds what the loader reserves ahead for a bulk argument: it grows with the bytes
// that arrive, never to a length the file merely declares.
const chunk = 64 << 10

// Load reads the AOF in dir (appenddirname) for appendfilename fn, as Redis 7.0 does at start:
// the manifest (or, without one, an old single appendonly.aof in dir's parent, which is moved in
// and given a manifest), then the base (loadBase gets it; isRDB when it starts with "REDIS"; a
// base in AOF format and an old file's tail after an RDB preamble are replayed like INCR files),
// then every INCR file in order. apply gets each command with the database selected at that
// point; SELECT is tracked here and not passed on, and a MULTI…EXEC block is passed on command by
// command (without MULTI and EXEC) once its EXEC is read. An error from loadBase or apply stops
// the load. With no AOF at all the result has a nil Manifest and the error is nil.
//
// loadBase must read no further than the RDB's end (its 8-byte checksum), as Redis's rio does:
// in an old-style file the AOF tail starts right there. Every file is replayed from database 0,
// as Redis's fresh fake client per file is.
func Load(fsys FS, dir, fn string, loadBase func(r io.Reader, isRDB bool) error,
	apply func(db int, argv [][]byte) error, opts LoadOptions) (*LoadResult, error) {
	res := &LoadResult{}
	m, err := readManifest(fsys, dir, fn)
	if err != nil {
		return res, err
	}
	if m, err = upgradeIfOld(fsys, dir, fn, m, res); err != nil || m == nil {
		return res, err
	}
	res.Manifest = m
	var files []Info
	if m.Base != nil {
		files = append(files, *m.Base)
	}
	files = append(files, m.Incr...)
	for _, f := range files {
		size, err := fsys.Stat(join(dir, f.Name))
		if err != nil {
			return res, fmt.Errorf("The append log file %s doesn't exist: %w", f.Name, err)
		}
		res.TotalSize += size
		if f.Type == TypeBase {
			res.BaseSize = size
		}
	}
	l := &loader{fsys: fsys, dir: dir, apply: apply, opts: opts, total: res.TotalSize, res: res}
	for i, f := range files {
		if err := l.file(f, loadBase, i == len(files)-1); err != nil {
			return res, err
		}
	}
	if opts.Progress != nil {
		opts.Progress(l.done, l.total)
	}
	return res, nil
}

// upgradeIfOld is Redis's aofUpgradePrepare: an appendonly.aof beside the directory, with no
// manifest (or only a base manifest naming it that is not in the directory yet), is moved in.
func upgradeIfOld(fsys FS, dir, fn string, m *Manifest, res *LoadResult) (*Manifest, error) {
	old := join(parentDir(dir), fn)
	if !exists(fsys, old) {
		return m, nil
	}
	if m != nil && !(m.Base == nil && len(m.Incr) == 0) &&
		!(m.Base != nil && len(m.Incr) == 0 && m.Base.Name == fn && !exists(fsys, join(dir, fn))) {
		return m, nil
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("Can't open or create append-only dir %s: %w", dir, err)
	}
	if m == nil {
		m = &Manifest{}
	}
	m.Base, m.BaseSeq = &Info{Name: fn, Seq: 1, Type: TypeBase}, 1
	if err := writeManifest(fsys, dir, fn, m); err != nil {
		return nil, err
	}
	if err := fsys.Rename(old, join(dir, fn)); err != nil {
		return nil, fmt.Errorf("Error trying to move the old AOF file %s into dir %s: %w", fn, dir, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return nil, err
	}
	res.Upgraded = true
	return m, nil
}

func parentDir(dir string) string {
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		if i == 0 {
			return "/"
		}
		return dir[:i]
	}
	return "."
}

// loader replays command streams.
type loader struct {
	fsys  FS
	dir   string
	apply func(db int, argv [][]byte) error
	opts  LoadOptions
	res   *LoadResult
	db    int
	total int64
	done  int64 // bytes of earlier files
}

func (l *loader) logf(format string, args ...any) {
	if l.opts.Logf != nil {
		l.opts.Logf(format, args...)
	}
}

func (l *loader) file(f Info, loadBase func(io.Reader, bool) error, last bool) error {
	rc, err := l.fsys.Open(join(l.dir, f.Name))
	if err != nil {
		return fmt.Errorf("Fatal error: can't open the append log file %s for reading: %w", f.Name, err)
	}
	defer rc.Close()
	l.db = 0 // each file is read by a new fake client, in database 0
	cr := &countReader{r: rc}
	br := bufio.NewReaderSize(cr, 64<<10)
	sig, _ := br.Peek(5)
	var start int64
	if string(sig) == "REDIS" {
		if loadBase == nil {
			return fmt.Errorf("Error reading the RDB base file %s, AOF loading aborted: no RDB loader", f.Name)
		}
		// The RDB loader reads through a counter so that an old-style preamble's AOF tail is
		// replayed from where the RDB ended.
		pr := &countReader{r: br}
		if err := loadBase(pr, true); err != nil {
			return fmt.Errorf("Error reading the RDB base file %s, AOF loading aborted: %w", f.Name, err)
		}
		start = pr.n
	}
	valid, err := l.stream(f.Name, br, start)
	l.done += cr.n
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrTruncated) {
		return err
	}
	if !last || !l.opts.Truncated {
		if !last {
			l.logf("Fatal error: the truncated file is not the last file")
		}
		l.logf("Unexpected end of file reading the append only file %s. You can: "+
			"1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "+
			"2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.", f.Name)
		return fmt.Errorf("%w %s (last valid offset %d)", ErrTruncated, f.Name, valid)
	}
	l.logf("!!! Warning: short read while loading the AOF file %s!!!", f.Name)
	l.logf("!!! Truncating the AOF %s at offset %d !!!", f.Name, valid)
	if err := truncateFile(l.fsys, join(l.dir, f.Name), valid); err != nil {
		l.logf("Error truncating the AOF file %s: %v", f.Name, err)
		return fmt.Errorf("%w %s: cannot truncate: %w", ErrTruncated, f.Name, err)
	}
	l.logf("AOF %s loaded anyway because aof-load-truncated is enabled", f.Name)
	l.res.Truncated = true
	return nil
}

func truncateFile(fsys FS, name string, size int64) error {
	f, err := fsys.OpenAppend(name)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// stream replays one file's commands from offset start. It returns the offset after the last
// whole command applied (where a torn tail is cut) and ErrTruncated when the file ends inside a
// command or inside a MULTI block, a *FormatError for bytes that are not the format.
func (l *loader) stream(name string, br *bufio.Reader, start int64) (int64, error) {
	p := &parser{br: br, off: start}
	valid, beforeMulti := start, start
	var multi [][][]byte
	inMulti := false
	for n := 0; ; n++ {
		if n%1024 == 0 && l.opts.Progress != nil {
			l.opts.Progress(l.done+p.off, l.total)
		}
		at := p.off
		argv, err := p.command()
		if err == io.EOF {
			break
		}
		if err != nil && inMulti && errors.Is(err, ErrTruncated) {
			// Torn inside a MULTI block: cut before the MULTI. (Redis cuts after the last whole
			// command and drops the dangling MULTI at the next load; the data is the same.)
			return beforeMulti, err
		}
		if err != nil {
			if fe, ok := err.(*FormatError); ok {
				fe.File, fe.Offset = name, at
				l.logf("Bad file format reading the append only file %s: "+
					"make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>", name)
			}
			return valid, err
		}
		switch {
		case strings.EqualFold(string(argv[0]), "multi"):
			if inMulti {
				return valid, &FormatError{File: name, Offset: at, Msg: "MULTI calls can not be nested"}
			}
			inMulti, beforeMulti, multi = true, valid, multi[:0]
		case strings.EqualFold(string(argv[0]), "exec"):
			if !inMulti {
				return valid, &FormatError{File: name, Offset: at, Msg: "EXEC without MULTI"}
			}
			inMulti = false
			for _, a := range multi {
				if err := l.run(name, at, a); err != nil {
					return valid, err
				}
			}
		case inMulti:
			multi = append(multi, argv)
		default:
			if err := l.run(name, at, argv); err != nil {
				return valid, err
			}
		}
		valid = p.off
	}
	if inMulti {
		l.logf("Revert incomplete MULTI/EXEC transaction in AOF file %s", name)
		return beforeMulti, ErrTruncated
	}
	return valid, nil
}

// run applies one command, or tracks SELECT.
func (l *loader) run(name string, at int64, argv [][]byte) error {
	l.res.Commands++
	if strings.EqualFold(string(argv[0]), "select") {
		db, err := strconv.Atoi(string(argv[len(argv)-1]))
		if len(argv) != 2 || err != nil || db < 0 {
			return &FormatError{File: name, Offset: at, Msg: "invalid SELECT"}
		}
		l.db = db
		return nil
	}
	if err := l.apply(l.db, argv); err != nil {
		return fmt.Errorf("cannot apply the command at offset %d of the append only file %s: %w", at, name, err)
	}
	return nil
}

// parser reads commands in the AOF format with the tolerance of Redis's loader: '#' annotation
// lines are skipped; counts are parsed as C's atoi/strtol do.
type parser struct {
	br  *bufio.Reader
	off int64
}

func (p *parser) line() ([]byte, error) {
	b, err := readLineMax(p.br, lineMax-1)
	p.off += int64(len(b))
	if err == io.EOF && len(b) > 0 {
		err = nil // fgets returns a last line without its newline
	}
	return b, err
}

// command returns the next command (arguments copied), io.EOF at a clean end, ErrTruncated
// when the file ends inside one, a *FormatError otherwise.
func (p *parser) command() ([][]byte, error) {
	var b []byte
	var err error
	for {
		if b, err = p.line(); err != nil {
			return nil, io.EOF
		}
		if b[0] != '#' {
			break
		}
	}
	if b[0] != '*' {
		return nil, &FormatError{Msg: "expected '*'"}
	}
	if len(b) == 1 {
		return nil, ErrTruncated
	}
	argc := atoll(string(b[1:]))
	if argc < 1 || argc > 1<<31-1 {
		return nil, &FormatError{Msg: "invalid multibulk length"}
	}
	argv := make([][]byte, 0, min(argc, 1024))
	for range argc {
		if b, err = p.line(); err != nil {
			return nil, ErrTruncated
		}
		if b[0] != '$' {
			return nil, &FormatError{Msg: "expected '$'"}
		}
		n := atoll(string(b[1:]))
		if n < 0 || n > 1<<40 {
			return nil, &FormatError{Msg: "invalid bulk length"}
		}
		arg, err := p.bulk(n)
		if err != nil {
			return nil, err
		}
		argv = append(argv, arg)
	}
	return argv, nil
}

// bulk reads n bytes and the CRLF after them, reserving memory only as bytes arrive.
func (p *parser) bulk(n int64) ([]byte, error) {
	arg := make([]byte, 0, min(n, chunk))
	for int64(len(arg)) < n {
		if len(arg) == cap(arg) {
			arg = append(arg[:cap(arg)], make([]byte, min(n-int64(len(arg)), int64(cap(arg))))...)[:len(arg)]
		}
		k, err := io.ReadFull(p.br, arg[len(arg):min(int64(cap(arg)), n)])
		arg = arg[:len(arg)+k]
		p.off += int64(k)
		if err != nil {
			return nil, ErrTruncated
		}
	}
	var crlf [2]byte
	k, err := io.ReadFull(p.br, crlf[:])
	p.off += int64(k)
	if err != nil {
		return nil, ErrTruncated
	}
	if crlf != [2]byte{'\r', '\n'} {
		return nil, &FormatError{Msg: "expected CRLF after a bulk argument"}
	}
	return arg, nil
}
