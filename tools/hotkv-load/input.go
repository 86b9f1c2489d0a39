package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
)

// Limits of one input command, enforced while its bytes arrive (nothing is reserved for a length the
// input merely declares): Redis's own defaults for a request.
const (
	maxBulk = 512 << 20 // proto-max-bulk-len
	maxArgs = 1 << 20
	maxLine = 64 << 20 // an inline command, a CSV or NDJSON record, an IP-list line
)

// A command is one request to send: its arguments and the input line it came from (for the report).
// A command that carries several input lines (IPSET.ADD of --per entries) has subs: each line's own
// command, sent instead when the whole one fails, so that the good lines load and each bad one is
// reported at its line.
type command struct {
	args [][]byte
	line int64
	subs []subCmd
}

// subCmd is one encoded single-line command of a grouped one.
type subCmd struct {
	enc  []byte
	line int64
}

// lineError is bad input at one line: it is reported like a server's error reply and loading goes on.
type lineError struct {
	line int64
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// A source yields commands one at a time: next returns a *lineError for a bad record (the caller
// counts it and calls next again), io.EOF at the end, and any other error when the input cannot be
// read on. The returned arguments stay valid until the next call.
type source interface {
	next() (command, error)
}

// countingReader counts the bytes read from the file (before gunzip), for the progress line.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readLine reads one line without its "\n" or "\r\n", as long as it really is (up to maxLine): the
// buffer grows with the bytes that arrived.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(buf) > 0 {
				return trimEOL(buf), nil
			}
			return nil, err
		}
		return trimEOL(buf), nil
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// --- RESP and inline --------------------------------------------------------------------------

// respSource reads what redis-cli --pipe reads: RESP arrays of bulk strings, with inline commands
// (a line of words) allowed between them, as Redis allows. line counts input lines (a RESP command's
// line is the line of its '*').
type respSource struct {
	br      *bufio.Reader
	line    int64
	args    [][]byte
	arena   []byte
	offs    []int
	scratch []byte
}

func newRESPSource(r io.Reader) *respSource {
	return &respSource{br: bufio.NewReaderSize(r, 1<<16)}
}

func (s *respSource) next() (command, error) {
	for {
		b, err := s.br.Peek(1)
		if err != nil {
			return command{}, err
		}
		if b[0] != '*' {
			s.line++
			ln, err := readLine(s.br, s.scratch)
			if err != nil {
				return command{}, err
			}
			s.scratch = ln
			args, perr := splitInline(ln, s.args[:0], &s.arena)
			if perr != nil {
				return command{}, &lineError{s.line, "Protocol error: " + perr.Error()}
			}
			if len(args) == 0 {
				continue
			}
			s.args = args
			return command{args: args, line: s.line}, nil
		}
		return s.readArray()
	}
}

// readArray reads *N then N bulk strings. A malformed header is fatal: a RESP stream cannot be
// resynchronised (Redis closes the connection too).
func (s *respSource) readArray() (command, error) {
	start := s.line + 1
	n, err := s.header('*')
	if err != nil {
		return command{}, err
	}
	if n > maxArgs {
		return command{}, fmt.Errorf("line %d: Protocol error: invalid multibulk length", start)
	}
	s.arena = s.arena[:0]
	s.offs = s.offs[:0]
	for range n {
		l, err := s.header('$')
		if err != nil {
			return command{}, err
		}
		if l > maxBulk {
			return command{}, fmt.Errorf("line %d: Protocol error: invalid bulk length", s.line)
		}
		// Copy the body as it arrives, never reserving l bytes up front.
		from := len(s.arena)
		for rem := l; rem > 0; {
			chunk, err := s.br.Peek(min(rem, s.br.Size()))
			if len(chunk) == 0 && err != nil {
				return command{}, unexpected(err)
			}
			s.arena = append(s.arena, chunk...)
			s.br.Discard(len(chunk))
			rem -= len(chunk)
		}
		var crlf [2]byte
		if _, err := io.ReadFull(s.br, crlf[:]); err != nil {
			return command{}, unexpected(err)
		}
		s.line += int64(bytes.Count(s.arena[from:], []byte("\n"))) + 1
		if crlf != [2]byte{'\r', '\n'} {
			return command{}, fmt.Errorf("line %d: Protocol error: bulk string not followed by CRLF", s.line)
		}
		s.offs = append(s.offs, len(s.arena))
	}
	s.args = s.args[:0]
	from := 0
	for _, end := range s.offs {
		s.args = append(s.args, s.arena[from:end:end])
		from = end
	}
	return command{args: s.args, line: start}, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// header reads "<kind><n>\r\n".
func (s *respSource) header(kind byte) (int, error) {
	ln, err := readLine(s.br, s.scratch)
	if err != nil {
		return 0, unexpected(err)
	}
	s.line++
	s.scratch = ln
	if len(ln) < 2 || ln[0] != kind {
		return 0, fmt.Errorf("line %d: Protocol error: expected '%c', got %q", s.line, kind, clip(ln))
	}
	n, err := strconv.Atoi(string(ln[1:]))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("line %d: Protocol error: invalid length %q", s.line, clip(ln))
	}
	return n, nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

var errUnbalanced = errors.New("unbalanced quotes in request")

// splitInline splits a line into arguments the way Redis reads an inline command (and redis-cli
// its input): words separated by blanks, "double quoted" with \n \r \t \b \a \\ \" and \xHH escapes,
// 'single quoted' with \' only. A closing quote must be followed by a blank or the end. The
// arguments are slices of *arena, which is reused.
func splitInline(ln []byte, args [][]byte, arena *[]byte) ([][]byte, error) {
	a := (*arena)[:0]
	var offs [][2]int
	i := 0
	for {
		for i < len(ln) && isBlank(ln[i]) {
			i++
		}
		if i >= len(ln) {
			break
		}
		start := len(a)
		switch ln[i] {
		case '"':
			i++
			for {
				if i >= len(ln) {
					return nil, errUnbalanced
				}
				c := ln[i]
				if c == '\\' && i+3 < len(ln) && ln[i+1] == 'x' && isHex(ln[i+2]) && isHex(ln[i+3]) {
					a = append(a, unhex(ln[i+2])<<4|unhex(ln[i+3]))
					i += 4
					continue
				}
				if c == '\\' && i+1 < len(ln) {
					i++
					switch ln[i] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					default:
						c = ln[i]
					}
					a = append(a, c)
					i++
					continue
				}
				if c == '"' {
					i++
					if i < len(ln) && !isBlank(ln[i]) {
						return nil, errUnbalanced
					}
					break
				}
				a = append(a, c)
				i++
			}
		case '\'':
			i++
			for {
				if i >= len(ln) {
					return nil, errUnbalanced
				}
				c := ln[i]
				if c == '\\' && i+1 < len(ln) && ln[i+1] == '\'' {
					a = append(a, '\'')
					i += 2
					continue
				}
				if c == '\'' {
					i++
					if i < len(ln) && !isBlank(ln[i]) {
						return nil, errUnbalanced
					}
					break
				}
				a = append(a, c)
				i++
			}
		default:
			for i < len(ln) && !isBlank(ln[i]) {
				a = append(a, ln[i])
				i++
			}
		}
		offs = append(offs, [2]int{start, len(a)})
	}
	*arena = a
	for _, o := range offs {
		args = append(args, a[o[0]:o[1]:o[1]])
	}
	return args, nil
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// --- templates: CSV, NDJSON and IP lists ---------------------------------------------------------

// A cmdTemplate is a --cmd: words (split like an inline command), each a mix of literal text and
// {name} placeholders; {{ is a literal brace. A word that expands to nothing stays an empty
// argument, except a word that is exactly one optional placeholder ({label?}), which is dropped.
type cmdTemplate struct {
	words [][]tplPiece
}

type tplPiece struct {
	text     string
	field    string // "" for text
	optional bool
}

func parseTemplate(s string) (*cmdTemplate, error) {
	var arena []byte
	words, err := splitInline([]byte(s), nil, &arena)
	if err != nil {
		return nil, fmt.Errorf("--cmd %q: %v", s, err)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("--cmd is empty")
	}
	t := &cmdTemplate{}
	for _, w := range words {
		var pieces []tplPiece
		str := string(w)
		for str != "" {
			i := strings.IndexByte(str, '{')
			if i < 0 {
				pieces = append(pieces, tplPiece{text: str})
				break
			}
			if strings.HasPrefix(str[i:], "{{") {
				pieces = append(pieces, tplPiece{text: str[:i+1]})
				str = str[i+2:]
				continue
			}
			j := strings.IndexByte(str[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("--cmd %q: unclosed {", s)
			}
			if i > 0 {
				pieces = append(pieces, tplPiece{text: str[:i]})
			}
			name := str[i+1 : i+j]
			p := tplPiece{field: name}
			if strings.HasSuffix(name, "?") {
				p.field, p.optional = name[:len(name)-1], true
			}
			if p.field == "" {
				return nil, fmt.Errorf("--cmd %q: empty placeholder {}", s)
			}
			pieces = append(pieces, p)
			str = str[i+j+1:]
		}
		t.words = append(t.words, pieces)
	}
	return t, nil
}

// fields looks a placeholder up: ok is false when the record has no such field.
type fields func(name string) (val []byte, ok bool)

// expand builds the arguments into arena (reused) and args.
func (t *cmdTemplate) expand(get fields, args [][]byte, arena *[]byte) ([][]byte, error) {
	a := (*arena)[:0]
	var offs [][2]int
	for _, w := range t.words {
		start := len(a)
		if len(w) == 1 && w[0].optional {
			v, ok := get(w[0].field)
			if !ok || len(v) == 0 {
				continue
			}
			a = append(a, v...)
			offs = append(offs, [2]int{start, len(a)})
			continue
		}
		for _, p := range w {
			if p.field == "" {
				a = append(a, p.text...)
				continue
			}
			v, ok := get(p.field)
			if !ok && !p.optional {
				return nil, fmt.Errorf("no field {%s}", p.field)
			}
			a = append(a, v...)
		}
		offs = append(offs, [2]int{start, len(a)})
	}
	*arena = a
	for _, o := range offs {
		args = append(args, a[o[0]:o[1]:o[1]])
	}
	return args, nil
}

// csvSource: one command per CSV record; {1}, {2}, … are its fields (from 1), {line} the record's
// fields joined by commas.
type csvSource struct {
	r     *csv.Reader
	tpl   *cmdTemplate
	rec   []string
	args  [][]byte
	arena []byte
	skip  int // header lines still to skip
}

func newCSVSource(r io.Reader, tpl *cmdTemplate, header bool) *csvSource {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	s := &csvSource{r: cr, tpl: tpl}
	if header {
		s.skip = 1
	}
	return s
}

func (s *csvSource) next() (command, error) {
	for {
		rec, err := s.r.Read()
		line, _ := s.r.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return command{}, &lineError{int64(pe.StartLine), "CSV: " + pe.Err.Error()}
			}
			return command{}, err
		}
		if s.skip > 0 {
			s.skip--
			continue
		}
		s.rec = rec
		args, err := s.tpl.expand(s.field, s.args[:0], &s.arena)
		if err != nil {
			return command{}, &lineError{int64(line), err.Error()}
		}
		s.args = args
		return command{args: args, line: int64(line)}, nil
	}
}

func (s *csvSource) field(name string) ([]byte, bool) {
	if name == "line" {
		return []byte(strings.Join(s.rec, ",")), true
	}
	i, err := strconv.Atoi(name)
	if err != nil || i < 1 || i > len(s.rec) {
		return nil, false
	}
	return []byte(s.rec[i-1]), true
}

// ndjsonSource: one command per JSON object a line; {name} is a top-level field: a string as its
// text, a number as written, true/false/null as those words, an object or array as compact JSON.
// {line} is the whole line. Blank lines are skipped.
type ndjsonSource struct {
	br    *bufio.Reader
	tpl   *cmdTemplate
	line  int64
	buf   []byte
	obj   map[string]json.RawMessage
	args  [][]byte
	arena []byte
	val   []byte
}

func (s *ndjsonSource) next() (command, error) {
	for {
		s.line++
		ln, err := readLine(s.br, s.buf)
		if err != nil {
			return command{}, err
		}
		s.buf = ln
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		clear(s.obj)
		if err := json.Unmarshal(ln, &s.obj); err != nil {
			return command{}, &lineError{s.line, "JSON: " + err.Error()}
		}
		args, err := s.tpl.expand(s.field, s.args[:0], &s.arena)
		if err != nil {
			return command{}, &lineError{s.line, err.Error()}
		}
		s.args = args
		return command{args: args, line: s.line}, nil
	}
}

func (s *ndjsonSource) field(name string) ([]byte, bool) {
	if name == "line" {
		return s.buf, true
	}
	raw, ok := s.obj[name]
	if !ok {
		return nil, false
	}
	if len(raw) > 0 && raw[0] == '"' {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			s.val = append(s.val[:0], str...)
			return s.val, true
		}
	}
	return raw, true
}

// --- IP lists ---------------------------------------------------------------------------------

// An ipEntry is one line of an IP list.
type ipEntry struct {
	entry   string // as the server will parse it: addr, addr/len or lo-hi
	label   string
	ttl     string // seconds, from ipset save's "timeout N"
	nomatch bool
	line    string
}

// parseIPLine reads one line of an IP list. Comments start at '#' or ';' (FireHOL netsets,
// Spamhaus DROP). The forms: "entry", "entry label", "entry,label", "lo,hi,label" (Tor's geoip:
// lo and hi are addresses or IPv4 as decimal integers), and ipset save's "add SET entry [timeout N]
// [nomatch] [comment "text"]" ("create" lines are skipped). skip is true for a line with no entry.
// The entry is not validated here unless it needs converting: the server gives the error.
func parseIPLine(ln string) (e ipEntry, skip bool, err error) {
	if i := strings.IndexAny(ln, "#;"); i >= 0 {
		ln = ln[:i]
	}
	ln = strings.TrimSpace(ln)
	if ln == "" {
		return e, true, nil
	}
	e.line = ln
	if strings.HasPrefix(ln, "create ") || ln == "create" || strings.HasPrefix(ln, "create\t") {
		return e, true, nil
	}
	if strings.HasPrefix(ln, "add ") || strings.HasPrefix(ln, "add\t") {
		return parseIpsetAdd(ln)
	}
	var parts []string
	if strings.IndexByte(ln, ',') >= 0 {
		parts = strings.Split(ln, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
	} else {
		parts = strings.Fields(ln)
	}
	switch len(parts) {
	case 1:
		e.entry = parts[0]
	case 2:
		e.entry, e.label = parts[0], parts[1]
	case 3:
		lo, err1 := rangeBound(parts[0])
		hi, err2 := rangeBound(parts[1])
		if err1 != nil || err2 != nil {
			return e, false, fmt.Errorf("invalid IP range '%s'", ln)
		}
		e.entry, e.label = lo+"-"+hi, parts[2]
	default:
		return e, false, fmt.Errorf("cannot read IP list line '%s'", ln)
	}
	if e.entry == "" {
		return e, false, fmt.Errorf("cannot read IP list line '%s'", ln)
	}
	return e, false, nil
}

// rangeBound turns a decimal IPv4 ("16777216") into dotted form and keeps an address as it is.
func rangeBound(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty")
	}
	if strings.IndexAny(s, ".:") >= 0 {
		return s, nil
	}
	u, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return "", err
	}
	return netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}).String(), nil
}

func parseIpsetAdd(ln string) (e ipEntry, skip bool, err error) {
	e.line = ln
	var arena []byte
	words, perr := splitInline([]byte(ln), nil, &arena)
	if perr != nil || len(words) < 3 {
		return e, false, fmt.Errorf("cannot read ipset line '%s'", ln)
	}
	e.entry = string(words[2])
	for i := 3; i < len(words); i++ {
		switch strings.ToLower(string(words[i])) {
		case "timeout":
			if i+1 >= len(words) {
				return e, false, fmt.Errorf("cannot read ipset line '%s'", ln)
			}
			e.ttl = string(words[i+1])
			i++
		case "nomatch":
			e.nomatch = true
		case "comment":
			if i+1 >= len(words) {
				return e, false, fmt.Errorf("cannot read ipset line '%s'", ln)
			}
			e.label = string(words[i+1])
			i++
		default:
			// packets, bytes, skbmark, …: counters and marks IP sets do not keep.
			if i+1 < len(words) {
				i++
			}
		}
	}
	return e, false, nil
}

// bounds gives an entry's first and last address (for {lo} {hi} {lo_int} {hi_int}).
func bounds(entry string) (lo, hi netip.Addr, err error) {
	if i := strings.IndexByte(entry, '-'); i >= 0 {
		lo, err1 := netip.ParseAddr(entry[:i])
		hi, err2 := netip.ParseAddr(entry[i+1:])
		if err1 != nil || err2 != nil || lo.BitLen() != hi.BitLen() || hi.Less(lo) || lo.Zone() != "" || hi.Zone() != "" {
			return lo, hi, fmt.Errorf("invalid IP set entry '%s'", entry)
		}
		return lo, hi, nil
	}
	if strings.IndexByte(entry, '/') >= 0 {
		p, err := netip.ParsePrefix(entry)
		if err != nil {
			return lo, hi, fmt.Errorf("invalid IP set entry '%s'", entry)
		}
		p = p.Masked()
		return p.Addr(), lastAddr(p), nil
	}
	a, err := netip.ParseAddr(entry)
	if err != nil || a.Zone() != "" {
		return lo, hi, fmt.Errorf("invalid IP set entry '%s'", entry)
	}
	return a, a, nil
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func addrInt(a netip.Addr) string {
	return new(big.Int).SetBytes(a.AsSlice()).String()
}

// ipSource turns IP-list lines into commands: with no --cmd, IPSET.ADD key [TTL s] [NOMATCH]
// [LABEL label] entry; a --cmd may use {key} {entry} {label} {ttl} {lo} {hi} {lo_int} {hi_int}
// {line} (SADD hosts {entry}, or ZADD geo {hi_int} {line} for Redis).
type ipSource struct {
	br    *bufio.Reader
	tpl   *cmdTemplate // nil: IPSET.ADD
	key   string
	line  int64
	buf   []byte
	cur   ipEntry
	args  [][]byte
	arena []byte
	lo    netip.Addr
	hi    netip.Addr
	bErr  error
	bDone bool

	per     int // entries per IPSET.ADD (no --cmd); 1: one command per line
	group   []ipEntry
	glines  []int64
	held    *ipEntry // the entry that did not fit the last group
	heldAt  int64
	pending error // a bad line or the end met while filling the last group
}

func (s *ipSource) next() (command, error) {
	if s.tpl == nil && s.per > 1 {
		return s.nextGroup()
	}
	for {
		s.line++
		ln, err := readLine(s.br, s.buf)
		if err != nil {
			return command{}, err
		}
		s.buf = ln
		e, skip, perr := parseIPLine(string(ln))
		if perr != nil {
			return command{}, &lineError{s.line, "ERR " + perr.Error()}
		}
		if skip {
			continue
		}
		s.cur, s.bDone = e, false
		var args [][]byte
		if s.tpl == nil {
			args = s.ipsetAdd(e)
		} else if args, err = s.tpl.expand(s.field, s.args[:0], &s.arena); err != nil {
			if s.bErr != nil {
				err = s.bErr
			}
			return command{}, &lineError{s.line, "ERR " + err.Error()}
		}
		s.args = args
		return command{args: args, line: s.line}, nil
	}
}

// nextEntry reads the next line that holds an entry.
func (s *ipSource) nextEntry() (ipEntry, int64, error) {
	for {
		s.line++
		ln, err := readLine(s.br, s.buf)
		if err != nil {
			return ipEntry{}, 0, err
		}
		s.buf = ln
		e, skip, perr := parseIPLine(string(ln))
		if perr != nil {
			return ipEntry{}, 0, &lineError{s.line, "ERR " + perr.Error()}
		}
		if !skip {
			return e, s.line, nil
		}
	}
}

// groupable: entries that one IPSET.ADD can carry share its options (TTL, NOMATCH, LABELS or not).
func groupable(a, b *ipEntry) bool {
	return a.ttl == b.ttl && a.nomatch == b.nomatch && (a.label == "") == (b.label == "")
}

// nextGroup returns IPSET.ADD key [TTL s] [NOMATCH] [LABELS] entry [label] … of up to per
// consecutive entries that share their options.
func (s *ipSource) nextGroup() (command, error) {
	if s.pending != nil {
		err := s.pending
		if err == io.EOF || !isLineError(err) {
			return command{}, err // stays: the end is the end
		}
		s.pending = nil
		return command{}, err
	}
	s.group, s.glines = s.group[:0], s.glines[:0]
	if s.held != nil {
		s.group, s.glines = append(s.group, *s.held), append(s.glines, s.heldAt)
		s.held = nil
	}
	for len(s.group) < s.per {
		e, line, err := s.nextEntry()
		if err != nil {
			if len(s.group) == 0 {
				return command{}, err
			}
			s.pending = err
			break
		}
		if len(s.group) > 0 && !groupable(&s.group[0], &e) {
			s.held, s.heldAt = &e, line
			break
		}
		s.group, s.glines = append(s.group, e), append(s.glines, line)
	}
	if len(s.group) == 1 {
		args := s.ipsetAdd(s.group[0])
		s.args = args
		return command{args: args, line: s.glines[0]}, nil
	}
	first := &s.group[0]
	args := [][]byte{[]byte("IPSET.ADD"), []byte(s.key)}
	if first.ttl != "" {
		args = append(args, []byte("TTL"), []byte(first.ttl))
	}
	if first.nomatch {
		args = append(args, []byte("NOMATCH"))
	}
	labels := first.label != ""
	if labels {
		args = append(args, []byte("LABELS"))
	}
	subs := make([]subCmd, len(s.group))
	for i := range s.group {
		e := &s.group[i]
		args = append(args, []byte(e.entry))
		if labels {
			args = append(args, []byte(e.label))
		}
		subs[i] = subCmd{enc: appendCommand(nil, s.ipsetAdd(*e)), line: s.glines[i]}
	}
	return command{args: args, line: s.glines[0], subs: subs}, nil
}

func isLineError(err error) bool {
	var le *lineError
	return errors.As(err, &le)
}

func (s *ipSource) ipsetAdd(e ipEntry) [][]byte {
	a := s.arena[:0]
	args := s.args[:0]
	add := func(str string) {
		from := len(a)
		a = append(a, str...)
		args = append(args, a[from:len(a):len(a)])
	}
	// Reserve first so that appends do not move earlier arguments.
	need := len("IPSET.ADD") + len(s.key) + len("TTL") + len(e.ttl) + len("NOMATCH") + len("LABEL") + len(e.label) + len(e.entry)
	if cap(a) < need {
		a = make([]byte, 0, need*2)
	}
	add("IPSET.ADD")
	add(s.key)
	if e.ttl != "" {
		add("TTL")
		add(e.ttl)
	}
	if e.nomatch {
		add("NOMATCH")
	}
	if e.label != "" {
		add("LABEL")
		add(e.label)
	}
	add(e.entry)
	s.arena = a
	return args
}

func (s *ipSource) field(name string) ([]byte, bool) {
	e := &s.cur
	switch name {
	case "key":
		return []byte(s.key), true
	case "entry":
		return []byte(e.entry), true
	case "label":
		return []byte(e.label), true
	case "ttl":
		return []byte(e.ttl), e.ttl != ""
	case "line":
		return []byte(e.line), true
	case "lo", "hi", "lo_int", "hi_int":
		if !s.bDone {
			s.lo, s.hi, s.bErr = bounds(e.entry)
			s.bDone = true
		}
		if s.bErr != nil {
			return nil, false
		}
		switch name {
		case "lo":
			return []byte(s.lo.String()), true
		case "hi":
			return []byte(s.hi.String()), true
		case "lo_int":
			return []byte(addrInt(s.lo)), true
		}
		return []byte(addrInt(s.hi)), true
	}
	return nil, false
}
