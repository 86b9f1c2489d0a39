// Package aofcheck is the body of hotkv-check-aof: it checks Redis 7's
// multi-part AOF (a manifest, a base that is an RDB or a command stream, INCR
// files) or a single old-style file, as redis-check-aof 7.0.15 does, and with
// --fix truncates a damaged last file after asking.
//
// The scanner accepts exactly what redis-check-aof accepts, so the two agree
// on where the valid part of a file ends:
//
//  1. A command is "*<argc>\r\n" then argc times "$<len>\r\n<len bytes>\r\n";
//     the numbers are read as C's strtol reads them (spaces and a sign first,
//     digits, then "\r\n" must follow), from a line of at most 127 bytes.
//  2. A line starting with '#' is an annotation (at most 1023 bytes are one
//     annotation); "#TS:<unix seconds>" marks a time for
//     --truncate-to-timestamp. Any other first byte is a format error.
//  3. MULTI inside MULTI and EXEC outside one are errors; a file ending inside
//     MULTI is valid only up to the MULTI.
//  4. The valid part ends before the first command (or MULTI block) that does
//     not parse; bulk bytes are skipped, never held, so memory does not follow
//     a length the file declares.
package aofcheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Problem is the first thing in a file that is not the AOF format.
type Problem struct {
	Offset int64  // where the read that failed started
	Msg    string // what was wrong
	AtEOF  bool   // the file ended inside the command (or MULTI block)
}

// Result is what Scan found in one command stream.
type Result struct {
	Commands int64    // whole commands up to OKUpTo, MULTI and EXEC included
	Blocks   int64    // MULTI/EXEC blocks among them
	OKUpTo   int64    // offset after the last whole command outside an open MULTI
	End      int64    // offset where scanning stopped
	Problem  *Problem // nil when the whole stream is valid
	// TSCut is the offset of the first "#TS:" annotation later than the
	// timestamp asked for (-1: none; scanning stops there).
	TSCut int64
	// TSErr is a "#TS:" annotation that is not a number (scanning stops).
	TSErr bool
}

// Scan reads the command stream r, whose first byte is at file offset start.
// toTimestamp, when not 0, stops at the first "#TS:" annotation after it.
func Scan(r io.Reader, start, toTimestamp int64) Result {
	s := &scanner{br: bufio.NewReaderSize(r, 64<<10), off: start}
	return s.run(toTimestamp)
}

// scanWith is Scan reading through br, which it resets to r.
func scanWith(br *bufio.Reader, r io.Reader, start int64) Result {
	br.Reset(r)
	s := &scanner{br: br, off: start}
	return s.run(0)
}

type scanner struct {
	br  *bufio.Reader
	off int64
	eof bool // a read reached the end of the input
}

func (s *scanner) run(toTimestamp int64) Result {
	res := Result{TSCut: -1}
	multi := false
	var inBlock int64 // commands of the open MULTI block
	for {
		if !multi {
			res.OKUpTo = s.off
		}
		c, err := s.br.Peek(1)
		if err != nil {
			break
		}
		switch c[0] {
		case '*':
			at := s.off
			name, p := s.command()
			if p == nil {
				p = s.multiExec(name, &multi, at)
			}
			if p != nil {
				res.Problem = p
				res.End = s.off
				return res
			}
			inBlock++
			if !multi {
				res.Commands += inBlock
				if isCmd(name, "exec") {
					res.Blocks++
				}
				inBlock = 0
			}
		case '#':
			at := s.off
			line := s.line(1023)
			ts, ok := bytes.CutPrefix(line, []byte("#TS:"))
			if toTimestamp == 0 || !ok {
				continue
			}
			v, n := strtol(ts)
			if n >= len(ts) || ts[n] != '\r' { // strtol's end must be the line's end; no digits read as 0

				res.TSErr, res.End = true, s.off
				return res
			}
			if v > toTimestamp {
				res.TSCut, res.End = at, at
				return res
			}
		default:
			res.Problem = &Problem{Offset: s.off, Msg: fmt.Sprintf("format error: a command starts with '*', not %q", c[0])}
			res.End = s.off
			return res
		}
	}
	res.End = s.off
	if multi {
		res.Problem = &Problem{Offset: s.off, Msg: "the file ends inside MULTI: no EXEC", AtEOF: true}
	}
	return res
}

func isCmd(name []byte, want string) bool { return bytes.EqualFold(name, []byte(want)) }

func (s *scanner) multiExec(name []byte, multi *bool, at int64) *Problem {
	switch {
	case isCmd(name, "multi"):
		if *multi {
			return &Problem{Offset: at, Msg: "MULTI inside MULTI"}
		}
		*multi = true
	case isCmd(name, "exec"):
		if !*multi {
			return &Problem{Offset: at, Msg: "EXEC without MULTI"}
		}
		*multi = false
	}
	return nil
}

// line reads up to max bytes or through a newline, as fgets does.
func (s *scanner) line(max int) []byte {
	var out []byte
	for len(out) < max {
		b, err := s.br.ReadByte()
		if err != nil {
			s.eof = true
			break
		}
		s.off++
		out = append(out, b)
		if b == '\n' {
			break
		}
	}
	return out
}

// number reads a "<prefix><strtol number>\r\n" line.
func (s *scanner) number(prefix byte) (int64, *Problem) {
	at := s.off
	line := s.line(127)
	if len(line) == 0 {
		return 0, &Problem{Offset: at, Msg: fmt.Sprintf("the file ends where %q was expected", prefix), AtEOF: true}
	}
	if line[0] != prefix {
		return 0, &Problem{Offset: at, Msg: fmt.Sprintf("expected %q, got %q", prefix, line[0])}
	}
	v, n := strtol(line[1:])
	rest := line[1+n:]
	if !bytes.HasPrefix(rest, []byte("\r\n")) {
		return 0, &Problem{Offset: at, Msg: fmt.Sprintf("expected \"\\r\\n\" after the number, got %q", clip(rest)), AtEOF: s.eof}
	}
	return v, nil
}

// command reads one command and returns its name (up to 8 bytes of it: enough
// to tell MULTI and EXEC).
func (s *scanner) command() ([]byte, *Problem) {
	argc, p := s.number('*')
	if p != nil {
		return nil, p
	}
	var name []byte
	for i := int64(0); i < argc; i++ {
		n, p := s.number('$')
		if p != nil {
			return nil, p
		}
		at := s.off
		if n < 0 || n > 1<<62 {
			return nil, &Problem{Offset: at, Msg: fmt.Sprintf("bulk length %d out of range", n)}
		}
		var head [8]byte
		k, _ := io.ReadFull(s.br, head[:min(n, 8)])
		s.off += int64(k)
		if i == 0 {
			name = bytes.Clone(head[:k])
			if n > 8 {
				name = append(name, '?') // longer than any name we compare
			}
		}
		if int64(k) == min(n, 8) && n > 8 {
			m, _ := io.CopyN(io.Discard, s.br, n-8)
			k += int(m)
			s.off += m
		}
		var crlf [2]byte
		c, _ := io.ReadFull(s.br, crlf[:])
		s.off += int64(c)
		if int64(k) < n || c < 2 {
			s.eof = true
			return nil, &Problem{Offset: at, Msg: fmt.Sprintf("a %d-byte argument and its \"\\r\\n\" run past the end of the file", n), AtEOF: true}
		}
		if crlf != [2]byte{'\r', '\n'} {
			return nil, &Problem{Offset: at, Msg: fmt.Sprintf("expected \"\\r\\n\" after a %d-byte argument, got %q", n, crlf[:])}
		}
	}
	return name, nil
}

// strtol parses what C's strtol(s, &end, 10) parses; n is how many bytes it took
// (0 when there is no number). Out-of-range values saturate, as strtol's do.
func strtol(s []byte) (v int64, n int) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0, 0
	}
	u, err := strconv.ParseInt(string(s[i:j]), 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		u = 1<<63 - 1
		if neg {
			return -1 << 63, j
		}
	}
	if neg {
		u = -u
	}
	return u, j
}

func clip(b []byte) []byte {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// resyncWindow bounds how far past a problem Resync looks (and what it holds).
const resyncWindow = 64 << 20

// Resync looks past a problem for commands that still parse: from the first
// line after offset at (data's first byte) that starts a whole command, it
// counts the commands up to the next problem. found is -1 when none is within
// resyncWindow bytes. It tells a torn tail (nothing whole after it) from
// damage in the middle (valid commands would be lost by truncating).
func Resync(r io.Reader, at int64) (found int64, commands int64) {
	data, _ := io.ReadAll(io.LimitReader(r, resyncWindow))
	br := bufio.NewReaderSize(nil, 4096) // one buffer for every try
	// Bounded work: 10000 tries, and failed tries read at most 4 windows in all.
	budget := int64(4 * resyncWindow)
	for p, tries := 1, 0; p < len(data) && tries < 10000 && budget > 0; p++ {
		if data[p] != '*' || data[p-1] != '\n' {
			continue
		}
		tries++
		res := scanWith(br, bytes.NewReader(data[p:]), at+int64(p))
		if res.Commands > 0 {
			return at + int64(p), res.Commands
		}
		budget -= res.End - (at + int64(p))
	}
	return -1, 0
}
