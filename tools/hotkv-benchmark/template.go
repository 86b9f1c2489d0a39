package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The placeholders of a --command. Every __key__ draws a new key number from the distribution, so
// "MGET k:__key__ k:__key__" reads two (usually different) keys (but every __key__ of one
// --prefill-command is the same key: "PFADD h:__key__ e__key__" loads each key once); every __data__ is the --data-size
// value bytes, the same for every request; every __rand__ is --data-size printable random bytes
// drawn afresh for each request (SADD members, list elements that must all differ); every __line__
// is a line of the --lines file drawn at random for each occurrence (IP addresses to look up, one
// a line: "IPSET.MCONTAINS ips __line__ __line__").
const (
	keyHolder  = "__key__"
	dataHolder = "__data__"
	randHolder = "__rand__"
	lineHolder = "__line__"
)

// A template is one --command compiled once into the RESP bytes it sends: runs of constant arguments
// are stored already encoded, and only arguments holding a placeholder are assembled per request.
type template struct {
	text   string
	name   string // the command's name, upper case, for reports
	segs   []segment
	expect *expectation // what every reply must say (expect.go)
	lines  int          // __line__ placeholders in it
}

// A segment is either constant encoded bytes (pieces == nil) or one argument with placeholders.
type segment struct {
	lit    []byte
	pieces []piece
	fixed  int // the argument's length without its keys' digits
}

type pieceKind uint8

const (
	pieceText pieceKind = iota
	pieceKey
	pieceData
	pieceRand
	pieceLine
)

type piece struct {
	kind pieceKind
	text []byte
}

// keySource hands out key numbers; ok is false once a bounded source (the prefill's) is exhausted.
type keySource interface {
	next() (k uint64, ok bool)
}

// expander holds what expanding templates needs per connection, scratch space included, so that
// expansion allocates nothing once the scratch has grown to the largest argument.
type expander struct {
	keys   keySource
	oneKey bool     // every __key__ of a request is the same key (the prefill's)
	drawn  bool     // oneKey: the current request's key is in key
	key    uint64   // oneKey: the current request's key
	data   []byte   // __data__; __rand__ is as long
	lines  [][]byte // --lines: what __line__ draws from
	picks  []int    // the lines drawn for the argument being built
	rng    rand.PCG // draws __rand__'s bytes; the zero value is a valid generator
	width  int      // zero-pad key numbers to this many digits (redis-benchmark's -r keys have 12)
	digits []byte
	ends   []int
	tmp    [20]byte
}

// compileTemplate parses a command line: words separated by spaces, a word in double quotes may hold
// spaces (no escapes). Its expectation is inferred from the command's name until setExpect.
func compileTemplate(text string, dataSize int) (*template, error) {
	words, err := splitWords(text)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	t := &template{text: text, name: strings.ToUpper(words[0])}
	if t.expect, err = parseExpect(inferExpect(words), nil); err != nil {
		panic("BUG: an inferred expectation does not parse: " + err.Error())
	}
	t.expect.inferred, t.expect.command = true, t.name
	var lit []byte
	lit = append(lit, '*')
	lit = strconv.AppendInt(lit, int64(len(words)), 10)
	lit = append(lit, "\r\n"...)
	for _, w := range words {
		if !strings.Contains(w, keyHolder) && !strings.Contains(w, dataHolder) && !strings.Contains(w, randHolder) &&
			!strings.Contains(w, lineHolder) {
			lit = appendBulk(lit, w)
			continue
		}
		if len(lit) > 0 {
			t.segs = append(t.segs, segment{lit: lit})
			lit = nil
		}
		seg := dynamicSegment(w, dataSize)
		for _, p := range seg.pieces {
			if p.kind == pieceLine {
				t.lines++
			}
		}
		t.segs = append(t.segs, seg)
	}
	if len(lit) > 0 {
		t.segs = append(t.segs, segment{lit: lit})
	}
	return t, nil
}

// setExpect replaces the inferred expectation by an --expect spelling ("" keeps the inferred one);
// data is the __data__ value.
func (t *template) setExpect(spec string, data []byte) error {
	if spec == "" {
		return nil
	}
	e, err := parseExpect(spec, data)
	if err != nil {
		return err
	}
	t.expect = e
	return nil
}

// failure is the error that fails the run on a bad reply to t.
func (t *template) failure(bad *badReply) error {
	if bad.errText != nil {
		return &replyError{command: t.name, msg: string(bad.errText)}
	}
	return &unexpectedReply{template: t.text, got: bad.got, miss: bad.miss, expect: t.expect}
}

// unexpectedReply is a reply that parses but does not say what the template expects: it fails the
// run, since a server answering "missing" quickly is not a fast server.
type unexpectedReply struct {
	template string
	got      string
	miss     bool
	expect   *expectation
}

func (e *unexpectedReply) Error() string {
	msg := fmt.Sprintf("unexpected reply to %s: %s; expected %s", e.template, e.got, e.expect.describe())
	if e.expect.inferred {
		msg += fmt.Sprintf(" (inferred from %s; --expect sets another)", e.expect.command)
	}
	if e.miss && !e.expect.misses {
		msg += "; is the data loaded (--prefill)? use --allow-misses to count misses as successes"
	}
	return msg
}

var holders = []struct {
	text string
	kind pieceKind
}{{keyHolder, pieceKey}, {dataHolder, pieceData}, {randHolder, pieceRand}, {lineHolder, pieceLine}}

// dynamicSegment cuts an argument at its placeholders.
func dynamicSegment(w string, dataSize int) segment {
	var s segment
	for len(w) > 0 {
		at, kind, holder := -1, pieceText, ""
		for _, h := range holders {
			if i := strings.Index(w, h.text); i >= 0 && (at < 0 || i < at) {
				at, kind, holder = i, h.kind, h.text
			}
		}
		if at < 0 {
			s = s.withText(w)
			break
		}
		s = s.withText(w[:at])
		s.pieces = append(s.pieces, piece{kind: kind})
		if kind == pieceData || kind == pieceRand {
			s.fixed += dataSize
		}
		w = w[at+len(holder):]
	}
	return s
}

func (s segment) withText(text string) segment {
	if text != "" {
		s.pieces = append(s.pieces, piece{kind: pieceText, text: []byte(text)})
		s.fixed += len(text)
	}
	return s
}

func splitWords(text string) ([]string, error) {
	var words []string
	for i := 0; i < len(text); {
		switch {
		case text[i] == ' ' || text[i] == '\t':
			i++
		case text[i] == '"':
			end := strings.IndexByte(text[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unbalanced quotes in %q", text)
			}
			words = append(words, text[i+1:i+1+end])
			i += end + 2
		default:
			end := strings.IndexAny(text[i:], " \t")
			if end < 0 {
				end = len(text) - i
			}
			words = append(words, text[i:i+end])
			i += end
		}
	}
	return words, nil
}

func appendBulk(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, s...)
	return append(dst, "\r\n"...)
}

// appendTo appends one request. ok is false when the key source ran out; dst then comes back at its
// original length, so a batch never holds half a command.
func (t *template) appendTo(dst []byte, e *expander) (out []byte, ok bool) {
	start := len(dst)
	e.drawn = false
	for i := range t.segs {
		s := &t.segs[i]
		if s.pieces == nil {
			dst = append(dst, s.lit...)
			continue
		}
		if dst, ok = e.appendArg(dst, s); !ok {
			return dst[:start], false
		}
	}
	return dst, true
}

// appendArg draws the argument's keys and lines first, since the bulk header must state the length.
func (e *expander) appendArg(dst []byte, s *segment) ([]byte, bool) {
	e.digits, e.ends, e.picks = e.digits[:0], e.ends[:0], e.picks[:0]
	size := s.fixed
	for _, p := range s.pieces {
		switch p.kind {
		case pieceKey:
			k, ok := e.nextKey()
			if !ok {
				return dst, false
			}
			e.appendKey(k)
		case pieceLine:
			i := int(e.rng.Uint64() % uint64(len(e.lines)))
			e.picks = append(e.picks, i)
			size += len(e.lines[i])
		}
	}
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(size+len(e.digits)), 10)
	dst = append(dst, "\r\n"...)
	from, key, line := 0, 0, 0
	for _, p := range s.pieces {
		switch p.kind {
		case pieceLine:
			dst = append(dst, e.lines[e.picks[line]]...)
			line++
		case pieceText:
			dst = append(dst, p.text...)
		case pieceData:
			dst = append(dst, e.data...)
		case pieceRand:
			dst = e.appendRand(dst, len(e.data))
		case pieceKey:
			dst = append(dst, e.digits[from:e.ends[key]]...)
			from = e.ends[key]
			key++
		}
	}
	return append(dst, "\r\n"...), true
}

// randAlphabet is what __rand__'s bytes are made of: the 64 printable characters from '0' to 'o', so
// that a random byte's low six bits plus '0' is one, eight of them at once in a 64-bit word.
const randAlphabet = "0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmno"

// appendRand appends n random printable bytes from e's generator: a fresh value per call, eight
// bytes per draw.
func (e *expander) appendRand(dst []byte, n int) []byte {
	const low6, zeros = 0x3f3f3f3f3f3f3f3f, 0x3030303030303030 // no byte carries: 63+'0' < 256
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	for len(out) >= 8 {
		binary.LittleEndian.PutUint64(out, e.rng.Uint64()&low6+zeros)
		out = out[8:]
	}
	if len(out) > 0 {
		var last [8]byte
		binary.LittleEndian.PutUint64(last[:], e.rng.Uint64()&low6+zeros)
		copy(out, last[:])
	}
	return dst[:len(dst)+n]
}

// nextKey is the key of the next __key__: a new draw, or with oneKey the request's one key.
func (e *expander) nextKey() (uint64, bool) {
	if e.oneKey && e.drawn {
		return e.key, true
	}
	k, ok := e.keys.next()
	e.key, e.drawn = k, ok
	return k, ok
}

// appendKey adds k's digits to e.digits, zero-padded to e.width.
func (e *expander) appendKey(k uint64) {
	d := strconv.AppendUint(e.tmp[:0], k, 10)
	for range e.width - len(d) {
		e.digits = append(e.digits, '0')
	}
	e.digits = append(e.digits, d...)
	e.ends = append(e.ends, len(e.digits))
}

// maxSize bounds one request's encoded size with keys of at most width digits (and never fewer than
// 20, a uint64's most), to size write buffers once; each __line__ adds the longest line's length.
func (t *template) maxSize(width int) int {
	n := 0
	for _, s := range t.segs {
		n += len(s.lit)
		if s.pieces != nil {
			n += 24 + s.fixed // header and CRLF
			for _, p := range s.pieces {
				if p.kind == pieceKey {
					n += max(20, width)
				}
			}
		}
	}
	return n
}

// schedule turns per-command weights into the repeating order in which a connection issues them:
// weights 1:10 give one of the first command, then ten of the second.
func schedule(weights []int) []uint8 {
	var order []uint8
	for i, w := range weights {
		for range w {
			order = append(order, uint8(i))
		}
	}
	return order
}

// parseRatio reads "a:b:c" for n commands; empty means equal weights.
func parseRatio(s string, n int) ([]int, error) {
	weights := make([]int, n)
	if s == "" {
		for i := range weights {
			weights[i] = 1
		}
		return weights, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) != n {
		return nil, fmt.Errorf("--ratio %q has %d weights for %d commands", s, len(parts), n)
	}
	total := 0
	for i, p := range parts {
		w, err := strconv.Atoi(p)
		if err != nil || w < 0 || w > 1000 {
			return nil, fmt.Errorf("--ratio weight %q is not an integer in 0..1000", p)
		}
		weights[i] = w
		total += w
	}
	if total == 0 {
		return nil, errors.New("--ratio weights are all zero")
	}
	return weights, nil
}
