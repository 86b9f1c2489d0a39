package resp

import (
	"math"
	"strconv"
	"strings"
)

// The encoders append one reply (or one aggregate header) to dst and return the extended slice, like
// strconv's Append functions; they allocate only when dst must grow. proto is the connection's protocol
// version, 2 or 3; anything below 3 gets the RESP2 form.

// AppendSimple appends a simple string: "+" s CRLF. CR and LF inside s become spaces, because a simple
// string cannot hold them and the reply would otherwise split in two.
func AppendSimple(dst []byte, s string) []byte {
	dst = append(dst, '+')
	dst = appendOneLine(dst, s)
	return append(dst, '\r', '\n')
}

// AppendError appends an error reply: "-" msg CRLF. msg starts with its code ("ERR ...", "WRONGTYPE
// ..."). Like Redis's addReplyErrorFormat, CR and LF are trimmed from both ends of msg and turned into
// spaces inside it, so text quoted from a client cannot break the reply.
func AppendError(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	dst = appendOneLine(dst, strings.Trim(msg, "\r\n"))
	return append(dst, '\r', '\n')
}

// appendOneLine appends s with CR and LF replaced by spaces.
func appendOneLine(dst []byte, s string) []byte {
	at := len(dst)
	dst = append(dst, s...)
	if strings.ContainsAny(s, "\r\n") {
		for i := at; i < len(dst); i++ {
			if dst[i] == '\r' || dst[i] == '\n' {
				dst[i] = ' '
			}
		}
	}
	return dst
}

// AppendInt appends an integer reply: ":" n CRLF.
func AppendInt(dst []byte, n int64) []byte {
	return appendPrefixed(dst, ':', n)
}

// AppendBulk appends a bulk string: "$" len CRLF b CRLF.
func AppendBulk(dst, b []byte) []byte {
	dst = appendPrefixed(dst, '$', int64(len(b)))
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendBulkString is AppendBulk for a string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = appendPrefixed(dst, '$', int64(len(s)))
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendBulkInt appends n in decimal as a bulk string (Redis's addReplyBulkLongLong).
func AppendBulkInt(dst []byte, n int64) []byte {
	var tmp [24]byte
	return AppendBulk(dst, strconv.AppendInt(tmp[:0], n, 10))
}

// AppendNull appends the null reply: "$-1" in RESP2 (a null bulk string), "_" in RESP3.
func AppendNull(dst []byte, proto int) []byte {
	if proto >= 3 {
		return append(dst, "_\r\n"...)
	}
	return append(dst, "$-1\r\n"...)
}

// AppendNullArray appends the null reply Redis uses where RESP2 expects an array: "*-1" in RESP2,
// "_" in RESP3.
func AppendNullArray(dst []byte, proto int) []byte {
	if proto >= 3 {
		return append(dst, "_\r\n"...)
	}
	return append(dst, "*-1\r\n"...)
}

// AppendDouble appends a double as Redis 7.0's addReplyDouble does: printf's %.17g (so 0.1 is
// "0.10000000000000001"), "inf"/"-inf" for infinities, glibc's "nan"/"-nan" for NaNs; a bulk string in
// RESP2, a ',' double in RESP3.
func AppendDouble(dst []byte, proto int, f float64) []byte {
	if proto >= 3 {
		dst = append(dst, ',')
		dst = appendDoubleText(dst, f)
		return append(dst, '\r', '\n')
	}
	var tmp [32]byte
	return AppendBulk(dst, appendDoubleText(tmp[:0], f))
}

func appendDoubleText(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f) && math.Signbit(f):
		return append(dst, "-nan"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	// Go's 'g' with an explicit precision follows C's %g rules: exponent form below 1e-4 or from
	// 1e17 up, trailing zeros dropped, at least two exponent digits.
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// AppendBool appends a boolean: ":1"/":0" in RESP2, "#t"/"#f" in RESP3.
func AppendBool(dst []byte, proto int, b bool) []byte {
	switch {
	case proto >= 3 && b:
		return append(dst, "#t\r\n"...)
	case proto >= 3:
		return append(dst, "#f\r\n"...)
	case b:
		return append(dst, ":1\r\n"...)
	}
	return append(dst, ":0\r\n"...)
}

// AppendBigNumber appends a big number given in decimal: a bulk string in RESP2, "(" s CRLF in RESP3.
func AppendBigNumber(dst []byte, proto int, s string) []byte {
	if proto < 3 {
		return AppendBulkString(dst, s)
	}
	dst = append(dst, '(')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendVerbatim appends a verbatim string: a bulk string in RESP2; in RESP3 "=" len CRLF, then the
// 3-byte format ("txt", "mkd"), ':' and s. As in Redis, a shorter format is padded with spaces and a
// longer one cut to 3 bytes.
func AppendVerbatim(dst []byte, proto int, format string, s []byte) []byte {
	if proto < 3 {
		return AppendBulk(dst, s)
	}
	dst = appendPrefixed(dst, '=', int64(len(s))+4)
	for i := 0; i < 3; i++ {
		c := byte(' ')
		if i < len(format) {
			c = format[i]
		}
		dst = append(dst, c)
	}
	dst = append(dst, ':')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// appendPrefixed appends prefix, n in decimal and CRLF: every length header and integer reply.
func appendPrefixed(dst []byte, prefix byte, n int64) []byte {
	dst = append(dst, prefix)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}
