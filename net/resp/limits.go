package resp

// inlineMax is Redis's PROTO_INLINE_MAX_SIZE: how many bytes Redis buffers while waiting for the end of an
// inline request or of a multibulk/bulk count line before it gives up with a "too big" protocol error.
const inlineMax = 64 * 1024

// Redis's limits for a client that has not authenticated yet (networking.c, since the fix of
// CVE-2021-32675; present in 7.0.15, checked against the real server).
const (
	unauthMaxArgs    = 10
	unauthMaxBulkLen = 16384
)

// Limits bound what one client may send. The zero value is not valid: start from DefaultLimits.
type Limits struct {
	// MaxBulkLen is proto-max-bulk-len: a longer bulk argument is "invalid bulk length".
	MaxBulkLen int64
	// Unauthenticated applies Redis's smaller limits for a client that must still AUTH (a password is
	// set and the client has not authenticated): more than 10 arguments is "unauthenticated multibulk
	// length", a bulk over 16384 bytes is "unauthenticated bulk length". Redis re-checks this before
	// each command, so while it is set the caller must parse one command, run it, then parse the next:
	// an AUTH lifts the limits for the very next command of the same pipeline.
	Unauthenticated bool
}

// DefaultLimits returns Redis's defaults: proto-max-bulk-len 512 MB, client authenticated.
func DefaultLimits() Limits {
	return Limits{MaxBulkLen: 512 * 1024 * 1024}
}

// defaultLimits is used when Parse is given nil limits.
var defaultLimits = DefaultLimits()

// ProtocolError is a malformed request. Msg is Redis's exact text after "-ERR ", for example
// "Protocol error: invalid multibulk length". The server replies with Append's bytes and then closes the
// connection, as Redis does.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return e.Msg }

// Append appends the reply Redis sends for this error: "-ERR " Msg CRLF.
func (e *ProtocolError) Append(dst []byte) []byte {
	dst = append(dst, "-ERR "...)
	dst = append(dst, e.Msg...)
	return append(dst, '\r', '\n')
}

// Redis's protocol error texts (networking.c, 7.0.15).
const (
	msgTooBigInline   = "Protocol error: too big inline request"
	msgUnbalanced     = "Protocol error: unbalanced quotes in request"
	msgTooBigMbulk    = "Protocol error: too big mbulk count string"
	msgInvalidMbulk   = "Protocol error: invalid multibulk length"
	msgUnauthMbulk    = "Protocol error: unauthenticated multibulk length"
	msgTooBigBulk     = "Protocol error: too big bulk count string"
	msgInvalidBulk    = "Protocol error: invalid bulk length"
	msgUnauthBulk     = "Protocol error: unauthenticated bulk length"
	msgExpectedDollar = "Protocol error: expected '$', got '"
)

func protoErr(msg string) error { return &ProtocolError{Msg: msg} }

// expectedDollar builds "expected '$', got 'X'". Redis formats the byte with %c and then replaces CR and
// LF in error texts by spaces so the reply stays one line; a NUL cannot get here (see lineEnd).
func expectedDollar(got byte) error {
	if got == '\r' || got == '\n' {
		got = ' '
	}
	return protoErr(msgExpectedDollar + string([]byte{got, '\''}))
}
