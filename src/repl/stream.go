// Package repl holds the pure parts of PSYNC replication: the primary's stream encoding (feed
// entries to Redis's replication stream, SELECT where the database changes) and the replica's
// stream parser. Sockets, snapshots and the engine are src/server's (repl*.go).
package repl

import (
	"errors"
	"strconv"
)

// Encoder turns feed entries into the replication stream: each entry's RESP as it is, preceded
// by SELECT when its database differs from the last one sent (Redis's replicationFeedSlaves).
type Encoder struct {
	db int // the database the stream is in; -1 before the first SELECT
}

// NewEncoder starts a stream whose replicas are in no known database (the first entry sends
// SELECT, as after a full sync or a new replication history).
func NewEncoder() *Encoder { return &Encoder{db: -1} }

// ForgetDB makes the next entry send SELECT (a new replica attached on a new history).
func (e *Encoder) ForgetDB() { e.db = -1 }

// Append appends entry cmd (RESP of one or more commands) of database db to dst.
func (e *Encoder) Append(dst []byte, db int, cmd []byte) []byte {
	if db != e.db {
		dst = AppendSelect(dst, db)
		e.db = db
	}
	return append(dst, cmd...)
}

// AppendSelect appends SELECT db as Redis's shared select commands spell it.
func AppendSelect(dst []byte, db int) []byte {
	n := strconv.Itoa(db)
	dst = append(dst, "*2\r\n$6\r\nSELECT\r\n$"...)
	dst = strconv.AppendInt(dst, int64(len(n)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, n...)
	return append(dst, "\r\n"...)
}

// AppendCommand appends args as a RESP array of bulk strings.
func AppendCommand(dst []byte, args ...string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, "\r\n"...)
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, a...)
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// ErrProtocol is the parser's refusal of bytes that are not a command stream; the replica drops
// the link (Redis's "Protocol error" closes the master client).
var ErrProtocol = errors.New("Protocol error in the replication stream")

// Limits bound what a stream command may declare, as Redis's proto-max-bulk-len and its 1M
// multibulk cap. Memory follows the bytes that arrived, never a declared length.
const (
	MaxArgs    = 1 << 20
	MaxBulkLen = 512 << 20
)

// Parse reads one command at the front of b. It returns the arguments (slices into b), the
// bytes the command took, and n == 0 when b holds only part of a command. Empty lines and
// inline commands are taken as Redis's processInlineBuffer takes them (a master's "\n" keepalive
// is an empty inline command: args nil, n > 0).
func Parse(b []byte, args [][]byte) (out [][]byte, n int, err error) {
	if len(b) == 0 {
		return args, 0, nil
	}
	if b[0] != '*' {
		return parseInline(b, args)
	}
	count, p, err := parseLen(b, 1)
	if err != nil || p == 0 {
		return args, 0, err
	}
	if count > MaxArgs {
		return args, 0, ErrProtocol
	}
	for i := int64(0); i < count; i++ {
		if p >= len(b) {
			return args, 0, nil
		}
		if b[p] != '$' {
			return args, 0, ErrProtocol
		}
		l, q, err := parseLen(b, p+1)
		if err != nil || q == 0 {
			return args, 0, err
		}
		if l < 0 || l > MaxBulkLen {
			return args, 0, ErrProtocol
		}
		if int64(len(b)-q) < l+2 {
			return args, 0, nil
		}
		end := q + int(l)
		if b[end] != '\r' || b[end+1] != '\n' {
			return args, 0, ErrProtocol
		}
		args = append(args, b[q:end:end])
		p = end + 2
	}
	return args, p, nil
}

// parseLen reads a decimal ending in CRLF from b[at:]; next is 0 when the line is incomplete.
func parseLen(b []byte, at int) (v int64, next int, err error) {
	neg := false
	i := at
	if i < len(b) && b[i] == '-' {
		neg, i = true, i+1
	}
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i-start > 18 {
			return 0, 0, ErrProtocol
		}
		v = v*10 + int64(b[i]-'0')
	}
	if i+1 >= len(b) {
		if i-start > 18 || len(b)-at > 24 {
			return 0, 0, ErrProtocol
		}
		return 0, 0, nil
	}
	if i == start || b[i] != '\r' || b[i+1] != '\n' {
		return 0, 0, ErrProtocol
	}
	if neg {
		v = -v
	}
	return v, i + 2, nil
}

// maxInline is Redis's PROTO_INLINE_MAX_SIZE.
const maxInline = 64 << 10

func parseInline(b []byte, args [][]byte) ([][]byte, int, error) {
	end := -1
	for i, c := range b {
		if c == '\n' {
			end = i
			break
		}
	}
	if end < 0 {
		if len(b) > maxInline {
			return args, 0, ErrProtocol
		}
		return args, 0, nil
	}
	if end > maxInline {
		return args, 0, ErrProtocol
	}
	line := b[:end]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i {
			args = append(args, line[i:j:j])
		}
		i = j
	}
	return args, end + 1, nil
}
