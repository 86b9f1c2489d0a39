// Package resptest is the tests' one reply parser: it turns RESP2/RESP3 replies into values a test
// can inspect (a kind, a text, elements). It is written apart from net/resp's reader on purpose, so
// that a bug shared by the server's encoder and the project's reader cannot hide from a test; it is
// for tests and tools only and favours clear errors over speed.
package resptest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Value is one decoded reply. Kind is the RESP type byte ('+', '-', ':', '$', '*', '%', '~', '>',
// '_', ',', '#', '(', '=', '!'); Null is set for RESP2's $-1 and *-1 and RESP3's '_'. Str holds the
// text of simple, error, bulk, verbatim (with its "txt:" prefix), number, double, boolean and big
// number replies; Elems the elements of an aggregate (a map's keys and values alternate).
type Value struct {
	Kind  byte
	Null  bool
	Str   string
	Elems []Value
	// Attrs is an attribute map ('|') that came before the value, in pairs; nil without one.
	Attrs []Value
}

// Int returns an integer reply's value; it fails on any other kind.
func (v Value) Int() (int64, error) {
	if v.Kind != ':' {
		return 0, fmt.Errorf("not an integer reply: %s", v)
	}
	return strconv.ParseInt(v.Str, 10, 64)
}

// Text returns the text of a bulk, simple or verbatim string (a verbatim string without its
// three-letter format and colon).
func (v Value) Text() (string, error) {
	switch {
	case v.Null:
		return "", fmt.Errorf("null reply where a string was expected")
	case v.Kind == '$' || v.Kind == '+':
		return v.Str, nil
	case v.Kind == '=' && len(v.Str) >= 4:
		return v.Str[4:], nil
	}
	return "", fmt.Errorf("not a string reply: %s", v)
}

// Strings returns the texts of an aggregate's string elements.
func (v Value) Strings() ([]string, error) {
	if !v.IsAggregate() || v.Null {
		return nil, fmt.Errorf("not an aggregate reply: %s", v)
	}
	out := make([]string, 0, len(v.Elems))
	for _, e := range v.Elems {
		s, err := e.Text()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// IsAggregate reports whether v is an array, map, set or push.
func (v Value) IsAggregate() bool { return strings.IndexByte("*%~>", v.Kind) >= 0 }

// String renders v compactly for error messages.
func (v Value) String() string {
	var b strings.Builder
	v.render(&b)
	return b.String()
}

func (v Value) render(b *strings.Builder) {
	switch {
	case v.Null:
		b.WriteString("(nil)")
	case v.IsAggregate():
		fmt.Fprintf(b, "%c[", v.Kind)
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteByte(' ')
			}
			e.render(b)
		}
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "%c%q", v.Kind, v.Str)
	}
}

// Parse decodes exactly one reply from raw; trailing bytes are an error.
func Parse(raw []byte) (Value, error) {
	vs, err := ParseAll(raw)
	if err != nil {
		return Value{}, err
	}
	if len(vs) != 1 {
		return Value{}, fmt.Errorf("%d replies where one was expected in %q", len(vs), raw)
	}
	return vs[0], nil
}

// ParseAll decodes a stream of whole replies.
func ParseAll(raw []byte) ([]Value, error) {
	r := bufio.NewReader(bytes.NewReader(raw))
	var out []Value
	for {
		v, err := Read(r)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("bad reply stream %q: %w", raw, err)
		}
		out = append(out, v)
	}
}

// maxElems bounds an aggregate's declared length: a test reply never comes near it, and a broken
// length must not make the parser reserve memory for it.
const maxElems = 1 << 24

// Read decodes one reply from r. io.EOF means the stream ended cleanly before a reply.
func Read(r *bufio.Reader) (Value, error) { return (&decoder{r: r}).read() }

// ReadRaw reads one reply from r and returns its exact bytes, for tests that compare two servers
// byte for byte.
func ReadRaw(r *bufio.Reader) ([]byte, error) {
	d := &decoder{r: r, record: true}
	_, err := d.read()
	return d.raw, err
}

// decoder reads replies, keeping their bytes when record is set.
type decoder struct {
	r      *bufio.Reader
	record bool
	raw    []byte
}

func (d *decoder) read() (Value, error) {
	line, err := d.r.ReadString('\n')
	if d.record {
		d.raw = append(d.raw, line...)
	}
	if err != nil {
		if err == io.EOF && line != "" {
			err = io.ErrUnexpectedEOF
		}
		return Value{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return Value{}, fmt.Errorf("malformed reply line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+', '-', ':', ',', '#', '(':
		return Value{Kind: kind, Str: body}, nil
	case '_':
		return Value{Kind: kind, Null: true}, nil
	case '$', '=', '!':
		return d.blob(kind, body)
	case '*', '~', '>', '%':
		return d.aggregate(kind, body)
	case '|':
		attrs, err := d.aggregate('%', body)
		if err != nil {
			return Value{}, err
		}
		v, err := d.read()
		v.Attrs = attrs.Elems
		return v, noEOF(err)
	}
	return Value{}, fmt.Errorf("unknown reply type in %q", line)
}

func (d *decoder) blob(kind byte, count string) (Value, error) {
	n, err := strconv.Atoi(count)
	switch {
	case err != nil || n < -1:
		return Value{}, fmt.Errorf("bad length %q", count)
	case n == -1 && kind == '$':
		return Value{Kind: kind, Null: true}, nil
	case n == -1:
		return Value{}, fmt.Errorf("null length for type %c", kind)
	}
	var buf bytes.Buffer
	_, err = io.CopyN(&buf, d.r, int64(n)+2)
	b := buf.Bytes()
	if d.record {
		d.raw = append(d.raw, b...)
	}
	if err != nil {
		return Value{}, noEOF(err)
	}
	if !bytes.HasSuffix(b, []byte("\r\n")) {
		return Value{}, errors.New("bulk body not followed by CRLF")
	}
	return Value{Kind: kind, Str: string(b[:n])}, nil
}

func (d *decoder) aggregate(kind byte, count string) (Value, error) {
	n, err := strconv.Atoi(count)
	switch {
	case err != nil || n < -1 || n > maxElems:
		return Value{}, fmt.Errorf("bad aggregate length %q", count)
	case n == -1 && kind == '*':
		return Value{Kind: kind, Null: true}, nil
	case n == -1:
		return Value{}, fmt.Errorf("null length for type %c", kind)
	}
	if kind == '%' {
		n *= 2
	}
	v := Value{Kind: kind, Elems: []Value{}}
	for range n {
		e, err := d.read()
		if err != nil {
			return Value{}, noEOF(err)
		}
		v.Elems = append(v.Elems, e)
	}
	return v, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
