package resp

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadReplySplitsStream(t *testing.T) {
	var replies []string
	add := func(b []byte) { replies = append(replies, string(b)) }
	add(AppendSimple(nil, "OK"))
	add(AppendError(nil, "ERR x"))
	add(AppendInt(nil, -3))
	add(AppendBulkString(nil, "a\r\nb"))
	add(AppendBulk(nil, nil))
	add(AppendNull(nil, 2))
	add(AppendNull(nil, 3))
	add(AppendNullArray(nil, 2))
	add(AppendArrayLen(nil, 0))
	add(AppendDouble(nil, 3, 1.5))
	add(AppendBool(nil, 3, true))
	add(AppendBigNumber(nil, 3, "123"))
	add(AppendVerbatim(nil, 3, "txt", []byte("v\r\n")))
	add(append(AppendPushLen(nil, 3, 2), "+a\r\n:1\r\n"...))
	add([]byte("!5\r\nERR x\r\n"))
	// Nested: an array holding a map holding a set, a null and an empty array.
	nested := AppendArrayLen(nil, 2)
	nested = AppendMapLen(nested, 3, 2)
	nested = AppendBulkString(nested, "k")
	nested = AppendSetLen(nested, 3, 2)
	nested = AppendInt(AppendInt(nested, 1), 2)
	nested = AppendBulkString(nested, "k2")
	nested = AppendNullArray(nested, 2)
	nested = AppendArrayLen(nested, 0)
	add(nested)
	// An attribute travels with the reply it describes.
	attr := AppendAttrLen(nil, 1)
	attr = AppendBulkString(attr, "key")
	attr = AppendArrayLen(attr, 1)
	attr = AppendInt(attr, 9)
	add(AppendBulkString(attr, "reply"))
	add(AppendBulkString(nil, strings.Repeat("z", 3*bodyChunk+5)))
	add(AppendSimple(nil, strings.Repeat("s", 100)))

	// A tiny bufio buffer exercises lines longer than the reader's buffer.
	for _, size := range []int{16, 4096} {
		r := bufio.NewReaderSize(strings.NewReader(strings.Join(replies, "")), size)
		for i, want := range replies {
			got, err := ReadReply(r)
			if err != nil || string(got) != want {
				t.Fatalf("size %d reply %d: got %.60q, %v; want %.60q", size, i, got, err, want)
			}
		}
		if _, err := ReadReply(r); err != io.EOF {
			t.Fatalf("size %d: after the last reply err = %v, want io.EOF", size, err)
		}
	}
}

func TestReadReplyErrors(t *testing.T) {
	f := func(in string, want error) {
		t.Helper()
		_, err := ReadReply(bufio.NewReader(strings.NewReader(in)))
		if !errors.Is(err, want) {
			t.Fatalf("ReadReply(%.40q) err = %v, want %v", in, err, want)
		}
	}
	f("", io.EOF)
	f("+OK", io.ErrUnexpectedEOF)
	f("+OK\r", io.ErrUnexpectedEOF)
	f("$5\r\nab", io.ErrUnexpectedEOF)
	f("*2\r\n:1\r\n", io.ErrUnexpectedEOF)
	f("|1\r\n+k\r\n+v\r\n", io.ErrUnexpectedEOF)
	f("$1099511627776\r\nabc", io.ErrUnexpectedEOF) // a declared terabyte is not allocated up front
	f("+OK\n", errBadReply)
	f("\r\n", errBadReply)
	f("?x\r\n", errBadReply)
	f("$3\r\nabcde", errBadReply)
	f("$x\r\n", errBadLength)
	f("$-2\r\n", errBadLength)
	f("=-1\r\n", errBadLength)
	f("%-1\r\n", errBadLength)
	f("$9223372036854775807\r\n", errBadLength)
	f("*1099511627777\r\n", errBadLength)
	f("$?\r\n", errBadLength)
}
