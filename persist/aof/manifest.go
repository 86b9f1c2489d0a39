package aof

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// File types of a manifest line, as Redis writes them.
const (
	TypeBase    = 'b'
	TypeHistory = 'h'
	TypeIncr    = 'i'
)

// Info is one line of a manifest: a file, its sequence number and its type.
type Info struct {
	Name string
	Seq  int64
	Type byte
}

// Manifest lists the files of a multi-part AOF: at most one base, history files (to delete),
// and the INCR files in replay order. BaseSeq and IncrSeq are the highest numbers used so far.
type Manifest struct {
	Base    *Info
	History []Info
	Incr    []Info
	BaseSeq int64
	IncrSeq int64
}

// ManifestError is a manifest Redis would refuse to start with; Msg is the text Redis logs.
type ManifestError struct {
	Line int    // 1-based; 0 when the error is not about one line
	Text string // the line, trimmed, as Redis logs it after ">>> "
	Msg  string
}

func (e *ManifestError) Error() string {
	if e.Line == 0 {
		return "aof manifest: " + e.Msg
	}
	return fmt.Sprintf("aof manifest: line %d '%s': %s", e.Line, e.Text, e.Msg)
}

// manifestMaxLine is Redis's MANIFEST_MAX_LINE: a longer line is refused.
const manifestMaxLine = 1024

// clone returns a deep copy, so a change can be prepared and dropped if persisting it fails.
func (m *Manifest) clone() *Manifest {
	c := *m
	if m.Base != nil {
		b := *m.Base
		c.Base = &b
	}
	c.History = append([]Info(nil), m.History...)
	c.Incr = append([]Info(nil), m.Incr...)
	return &c
}

// BaseName, IncrName and ManifestName are Redis 7's file names for appendfilename fn.
func BaseName(fn string, seq int64, rdb bool) string {
	if rdb {
		return fmt.Sprintf("%s.%d.base.rdb", fn, seq)
	}
	return fmt.Sprintf("%s.%d.base.aof", fn, seq)
}

func IncrName(fn string, seq int64) string { return fmt.Sprintf("%s.%d.incr.aof", fn, seq) }

func ManifestName(fn string) string { return fn + ".manifest" }

// tempManifestName is where a manifest is written before it is renamed into place.
func tempManifestName(fn string) string { return "temp-" + fn + ".manifest" }

// Format returns the manifest as Redis writes it: base, history, then INCR files, one line
// each, names quoted when they need it.
func (m *Manifest) Format() []byte {
	var b []byte
	line := func(i Info) {
		b = append(b, "file "...)
		if needsRepr(i.Name) {
			b = appendRepr(b, i.Name)
		} else {
			b = append(b, i.Name...)
		}
		b = append(b, " seq "...)
		b = strconv.AppendInt(b, i.Seq, 10)
		b = append(b, " type "...)
		b = append(b, i.Type, '\n')
	}
	if m.Base != nil {
		line(*m.Base)
	}
	for _, i := range m.History {
		line(i)
	}
	for _, i := range m.Incr {
		line(i)
	}
	return b
}

// ParseManifest reads a manifest with Redis 7.0's rules (aofLoadManifestFromFile): comment
// lines, lines of at most 1024 bytes ending in a newline, key-value pairs in any order (extra
// pairs ignored), a nonzero seq, one base, INCR numbers increasing.
func ParseManifest(r io.Reader) (*Manifest, error) {
	br := bufio.NewReaderSize(r, manifestMaxLine+1)
	m := &Manifest{}
	var maxSeq int64
	for n := 1; ; n++ {
		raw, err := readLineMax(br, manifestMaxLine)
		if err == io.EOF && len(raw) == 0 {
			if n == 1 {
				return nil, &ManifestError{Msg: "Found an empty AOF manifest"}
			}
			return m, nil
		}
		if err != nil && err != io.EOF {
			return nil, &ManifestError{Msg: "Read AOF manifest failed"}
		}
		if raw[0] == '#' {
			continue
		}
		if raw[len(raw)-1] != '\n' {
			return nil, &ManifestError{Msg: "The AOF manifest file contains too long line"}
		}
		text := strings.Trim(string(raw), " \t\r\n")
		bad := func(msg string) error { return &ManifestError{Line: n, Text: text, Msg: msg} }
		if text == "" {
			return nil, bad("Invalid AOF manifest file format")
		}
		argv, ok := splitArgs(text)
		if !ok || len(argv) < 6 || len(argv)%2 != 0 {
			return nil, bad("Invalid AOF manifest file format")
		}
		var in Info
		var haveName bool
		for i := 0; i < len(argv); i += 2 {
			switch strings.ToLower(argv[i]) {
			case "file":
				in.Name, haveName = argv[i+1], true
				if strings.ContainsRune(in.Name, '/') {
					return nil, bad("File can't be a path, just a filename")
				}
			case "seq":
				in.Seq = atoll(argv[i+1])
			case "type":
				if argv[i+1] != "" {
					in.Type = argv[i+1][0]
				}
			}
		}
		if !haveName || in.Name == "" || in.Seq == 0 || in.Type == 0 {
			return nil, bad("Invalid AOF manifest file format")
		}
		switch in.Type {
		case TypeBase:
			if m.Base != nil {
				return nil, bad("Found duplicate base file information")
			}
			m.Base, m.BaseSeq = &in, in.Seq
		case TypeHistory:
			m.History = append(m.History, in)
		case TypeIncr:
			if in.Seq <= maxSeq {
				return nil, bad("Found a non-monotonic sequence number")
			}
			m.Incr = append(m.Incr, in)
			m.IncrSeq, maxSeq = in.Seq, in.Seq
		default:
			return nil, bad("Unknown AOF file type")
		}
	}
}

// readLineMax reads up to and including '\n', at most max bytes, as C's fgets with a buffer of
// max+1: a longer line comes back in pieces.
func readLineMax(br *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for len(out) < max {
		c, err := br.ReadByte()
		if err != nil {
			return out, err
		}
		out = append(out, c)
		if c == '\n' {
			break
		}
	}
	return out, nil
}

// atoll is C's: optional blanks and sign, then digits as far as they go; 0 when none.
func atoll(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if v > (1<<63-1-9)/10 {
			v = 1<<63 - 1
			break
		}
		v = v*10 + int64(s[i]-'0')
	}
	if neg {
		return -v
	}
	return v
}

// needsRepr is sds's sdsneedsrepr: a name with a backslash, a quote, a control or a space
// character is written quoted.
func needsRepr(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || c == '"' || c == '\n' || c == '\r' || c == '\t' || c == '\a' || c == '\b' ||
			c < 0x20 || c > 0x7e || c == ' ' || c == '\v' || c == '\f' {
			return true
		}
	}
	return false
}

// appendRepr is sds's sdscatrepr: a double-quoted string with C escapes and \xHH.
func appendRepr(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		default:
			if c >= 0x20 && c <= 0x7e {
				b = append(b, c)
			} else {
				b = fmt.Appendf(b, "\\x%02x", c)
			}
		}
	}
	return append(b, '"')
}

// splitArgs is sds's sdssplitargs: blank-separated words, "double quotes" with C escapes and
// \xHH, 'single quotes' with \' only; a closing quote must be followed by a blank or the end.
func splitArgs(s string) ([]string, bool) {
	var out []string
	i := 0
	for {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if i == len(s) {
			return out, true
		}
		var w bytes.Buffer
		inq, insq := false, false
		for done := false; !done; {
			switch {
			case inq:
				if i >= len(s) {
					return nil, false
				}
				if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) && isHex(s[i+3]) {
					v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
					w.WriteByte(byte(v))
					i += 3
				} else if s[i] == '\\' && i+1 < len(s) {
					i++
					w.WriteByte(unescape(s[i]))
				} else if s[i] == '"' {
					if i+1 < len(s) && !isBlank(s[i+1]) {
						return nil, false
					}
					done = true
				} else {
					w.WriteByte(s[i])
				}
			case insq:
				if i >= len(s) {
					return nil, false
				}
				if s[i] == '\\' && i+1 < len(s) && s[i+1] == '\'' {
					i++
					w.WriteByte('\'')
				} else if s[i] == '\'' {
					if i+1 < len(s) && !isBlank(s[i+1]) {
						return nil, false
					}
					done = true
				} else {
					w.WriteByte(s[i])
				}
			default:
				if i >= len(s) {
					done = true
					continue
				}
				switch s[i] {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					w.WriteByte(s[i])
				}
			}
			if i < len(s) {
				i++
			}
		}
		out = append(out, w.String())
	}
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// writeManifest persists m in dir as Redis does (writeAofManifestFile): a temp file, fsync,
// rename over the manifest, fsync of the directory.
func writeManifest(fsys FS, dir, fn string, m *Manifest) error {
	tmp, final := join(dir, tempManifestName(fn)), join(dir, ManifestName(fn))
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("cannot open the AOF manifest file %s: %w", tempManifestName(fn), err)
	}
	_, err = f.Write(m.Format())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write the temporary AOF manifest file %s: %w", tempManifestName(fn), err)
	}
	if err := fsys.Rename(tmp, final); err != nil {
		return fmt.Errorf("cannot rename the temporary AOF manifest file %s into %s: %w",
			tempManifestName(fn), ManifestName(fn), err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("cannot fsync AOF directory %s: %w", dir, err)
	}
	return nil
}

// readManifest loads dir's manifest; (nil, nil) when there is none.
func readManifest(fsys FS, dir, fn string) (*Manifest, error) {
	r, err := fsys.Open(join(dir, ManifestName(fn)))
	if err != nil {
		if !exists(fsys, join(dir, ManifestName(fn))) {
			return nil, nil
		}
		return nil, fmt.Errorf("cannot open the AOF manifest file %s for reading: %w", ManifestName(fn), err)
	}
	defer r.Close()
	return ParseManifest(r)
}
