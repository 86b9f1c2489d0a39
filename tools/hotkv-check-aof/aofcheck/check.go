package aofcheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/persist/aof"
	"github.com/hotkv/hotkv/tools/hotkv-check-rdb/rdbcheck"
)

// Usage is the command line, as redis-check-aof's.
const Usage = "Usage: hotkv-check-aof [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>"

// Main runs the checker on args (without the program name) and returns the
// exit status, as redis-check-aof's: 0 when every file is valid (or was
// fixed, or is empty), 1 otherwise, for refused fixes and for usage errors.
// Prompts are answered from stdin. Files over 64 MB show their progress on
// stderr (nil: nowhere), as hotkv-check-rdb's.
func Main(args []string, stdin io.Reader, stdout io.Writer, stderr *os.File) int {
	c := &run{out: stdout, in: bufio.NewReader(stdin), stderr: stderr}
	var file string
	switch {
	case len(args) == 1 && !strings.HasPrefix(args[0], "--"):
		file = args[0]
	case len(args) == 2 && args[0] == "--fix":
		c.fix, file = true, args[1]
	case len(args) == 3 && args[0] == "--truncate-to-timestamp":
		ts, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil {
			fmt.Fprintln(stdout, "Invalid timestamp, aborting...")
			return 1
		}
		c.toTS, file = ts, args[2]
	default:
		fmt.Fprintln(stdout, Usage)
		return 1
	}
	return c.main(file)
}

type run struct {
	out    io.Writer
	stderr *os.File
	in     *bufio.Reader
	fix    bool
	toTS   int64
	fixed  bool // a file was truncated
}

// exit ends the run with status 1 after a message.
type exitError struct{ msg string }

func (e *exitError) Error() string { return e.msg }

func fail(format string, args ...any) error { return &exitError{fmt.Sprintf(format, args...)} }

func (c *run) p(label, format string, args ...any) {
	fmt.Fprintf(c.out, "%-9s %s\n", label, fmt.Sprintf(format, args...))
}

func (c *run) main(file string) int {
	if _, err := os.Stat(file); err != nil {
		fmt.Fprintf(c.out, "Cannot open file %s: %v\n", file, err)
		return 1
	}
	var err error
	kind := fileKind(file)
	switch kind {
	case "manifest":
		err = c.multiPart(file)
	default:
		c.p("aof", "%s: an old-style single file%s", file, map[string]string{"rdb": " with an RDB preamble", "aof": ""}[kind])
		err = c.file(file, file, "aof", true)
	}
	if err != nil {
		c.p("result", "%v", err)
		return 1
	}
	switch {
	case c.fixed:
		c.p("result", "valid after the truncation")
	case kind == "manifest":
		c.p("result", "all AOF files and the manifest are valid")
	default:
		c.p("result", "AOF is valid")
	}
	return 0
}

// fileKind is redis-check-aof's getInputFileType: a manifest when the first
// line that is not a comment starts with "file", an RDB-preamble AOF when the
// file starts with "REDIS", else a command stream.
func fileKind(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return "aof"
	}
	defer f.Close()
	br := bufio.NewReader(io.LimitReader(f, 1<<20))
	head, _ := br.Peek(5)
	if string(head) == "REDIS" {
		return "rdb"
	}
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && line[0] == '#' && err == nil {
			continue
		}
		if bytes.HasPrefix(line, []byte("file")) {
			return "manifest"
		}
		return "aof"
	}
}

func (c *run) multiPart(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fail("cannot open the manifest %s: %v", file, err)
	}
	m, err := aof.ParseManifest(f)
	f.Close()
	if err != nil {
		return fail("the manifest %s is not valid: %v", file, err)
	}
	dir := filepath.Dir(file)
	base := "no base"
	if m.Base != nil {
		base = "base " + m.Base.Name
	}
	c.p("manifest", "%s: multi-part, %s, %d incr file(s), %d history file(s) (not checked)", file, base, len(m.Incr), len(m.History))
	if m.Base != nil {
		if err := c.file(filepath.Join(dir, m.Base.Name), m.Base.Name, "base", len(m.Incr) == 0); err != nil || c.fixed {
			return err
		}
	}
	for i, inc := range m.Incr {
		if err := c.file(filepath.Join(dir, inc.Name), inc.Name, "incr", i == len(m.Incr)-1); err != nil || c.fixed {
			return err
		}
	}
	return nil
}

// file checks one file (the base, an INCR file or an old-style file); last
// says whether it may be truncated.
func (c *run) file(path, name, label string, last bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fail("cannot open %s: %v", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail("cannot stat %s: %v", path, err)
	}
	size := st.Size()
	if size == 0 {
		c.p(label, "%s: empty", name)
		return nil
	}
	var start int64
	var head [5]byte
	var prog *rdbcheck.Progress
	var ropts rdbcheck.Options
	if size > rdbcheck.ProgressMin && c.stderr != nil {
		prog = rdbcheck.NewProgress(c.stderr, size)
		ropts.Progress = prog.Update
		defer prog.Finish()
	}
	if n, _ := f.ReadAt(head[:], 0); n == 5 && string(head[:]) == "REDIS" {
		rep := rdbcheck.Check(name, f, size, ropts)
		if !rep.OK {
			c.p(label, "%s: RDB part NOT valid: %s at offset %d: %s", name, rep.Error.Kind, rep.Error.Offset, rep.Error.Message)
			return fail("the RDB part of %s is not sane (hotkv-check-rdb %s tells more); --fix cannot repair it", name, name)
		}
		c.p(label, "%s: RDB part OK: RDB %d, %d keys, %d function libraries, CRC64 %s, %d bytes", name, rep.Version, rep.Keys, len(rep.Functions), rep.Checksum, rep.End)
		start = rep.End
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fail("cannot read %s: %v", path, err)
	}
	var r io.Reader = f
	if prog != nil {
		r = &progressReader{r: f, n: start, update: prog.Update}
	}
	res := Scan(r, start, c.toTS)
	if c.toTS != 0 {
		return c.toTimestamp(path, name, label, last, res)
	}
	if res.Problem == nil {
		what := "valid"
		if start > 0 {
			what = "after the RDB part, valid"
		}
		c.p(label, "%s: %d commands (%d MULTI blocks) in %d bytes %s", name, res.Commands, res.Blocks, size-start, what)
		return nil
	}
	return c.damaged(f, path, name, label, last, size, res)
}

func (c *run) toTimestamp(path, name, label string, last bool, res Result) error {
	switch {
	case res.TSErr:
		return fail("%s: a #TS annotation that is not a timestamp, near offset %d", name, res.End)
	case res.TSCut < 0:
		c.p(label, "%s: nothing after timestamp %d to truncate", name, c.toTS)
		return nil
	case res.TSCut == 0:
		return fail("%s has nothing before timestamp %d: not truncating it to nothing", name, c.toTS)
	case !last:
		return fail("%s has commands after timestamp %d from offset %d, but it is not the last file: "+
			"remove the files after it from the manifest (and the directory) first, then run again", name, c.toTS, res.TSCut)
	}
	if err := truncate(path, res.TSCut); err != nil {
		return fail("cannot truncate %s: %v", name, err)
	}
	c.fixed = true
	c.p(label, "%s: truncated to %d bytes, before the first annotation after timestamp %d", name, res.TSCut, c.toTS)
	return nil
}

func (c *run) damaged(f *os.File, path, name, label string, last bool, size int64, res Result) error {
	p := res.Problem
	diff := size - res.OKUpTo
	c.p(label, "%s: %d commands, then an ERROR at offset %d: %s", name, res.Commands, p.Offset, p.Msg)
	from := max(p.Offset, res.OKUpTo) + 1
	found, after := int64(-1), int64(0)
	if from < size {
		found, after = Resync(io.NewSectionReader(f, from, size-from), from)
	}
	torn := p.AtEOF && found < 0
	if torn {
		c.p("", "a torn tail: the file ends inside a command; whole commands end at offset %d (%d bytes after it)", res.OKUpTo, diff)
	} else if found >= 0 {
		c.p("", "damage in the middle: %d bytes after offset %d, where at least %d whole commands (from offset %d) still parse", diff, res.OKUpTo, after, found)
	} else {
		c.p("", "damage at offset %d: whole commands end at %d, %d bytes after it", p.Offset, res.OKUpTo, diff)
	}
	if !c.fix {
		return fail("AOF %s is NOT valid: --fix truncates it to %d bytes", name, res.OKUpTo)
	}
	if !last {
		return fail("cannot fix %s: it is not the last file, and truncating it would drop every file after it", name)
	}
	if torn {
		fmt.Fprintf(c.out, "This shrinks %s from %d bytes to %d, dropping the %d bytes of the torn command.\nContinue? [y/N]: ", name, size, res.OKUpTo, diff)
	} else {
		fmt.Fprintf(c.out, "The damage is not at the end: truncating %s to %d bytes drops everything after offset %d (%d bytes", name, res.OKUpTo, res.OKUpTo, diff)
		if found >= 0 {
			fmt.Fprintf(c.out, ", at least %d whole commands among them", after)
		}
		fmt.Fprintf(c.out, ").\nTruncate everything after the damage? [y/N]: ")
	}
	answer, _ := c.in.ReadString('\n')
	fmt.Fprintln(c.out)
	if !strings.HasPrefix(strings.ToLower(answer), "y") {
		return fail("aborted: %s is unchanged", name)
	}
	if err := truncate(path, res.OKUpTo); err != nil {
		return fail("cannot truncate %s: %v", name, err)
	}
	c.fixed = true
	c.p(label, "%s: truncated to %d bytes", name, res.OKUpTo)
	return nil
}

// truncate cuts the file to size bytes and syncs it.
func truncate(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// progressReader reports the file offset reached to update.
type progressReader struct {
	r      io.Reader
	n      int64
	update func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	p.update(p.n)
	return n, err
}
