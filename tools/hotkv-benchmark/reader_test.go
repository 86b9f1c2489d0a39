package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hotkv/hotkv/net/resp"
)

// replyCorpus is one reply of every RESP2/RESP3 shape, nested ones and bodies longer than the reader's
// buffer included.
func replyCorpus() []string {
	var out []string
	add := func(b []byte) { out = append(out, string(b)) }
	add(resp.AppendSimple(nil, "OK"))
	add(resp.AppendInt(nil, -3))
	add(resp.AppendBulkString(nil, "a\r\nb"))
	add(resp.AppendBulk(nil, nil))
	add(resp.AppendNull(nil, 2))
	add(resp.AppendNull(nil, 3))
	add(resp.AppendNullArray(nil, 2))
	add(resp.AppendArrayLen(nil, 0))
	add(resp.AppendDouble(nil, 3, 1.5))
	add(resp.AppendBool(nil, 3, true))
	add(resp.AppendBigNumber(nil, 3, "123"))
	add(resp.AppendVerbatim(nil, 3, "txt", []byte("v\r\n")))
	add(append(resp.AppendPushLen(nil, 3, 2), "+a\r\n:1\r\n"...))
	nested := resp.AppendArrayLen(nil, 2)
	nested = resp.AppendMapLen(nested, 3, 2)
	nested = resp.AppendBulkString(nested, "k")
	nested = resp.AppendSetLen(nested, 3, 2)
	nested = resp.AppendInt(resp.AppendInt(nested, 1), 2)
	nested = resp.AppendBulkString(nested, "k2")
	nested = resp.AppendNullArray(nested, 2)
	nested = resp.AppendArrayLen(nested, 0)
	add(nested)
	attr := resp.AppendAttrLen(nil, 1)
	attr = resp.AppendBulkString(attr, "key")
	attr = resp.AppendArrayLen(attr, 1)
	attr = resp.AppendInt(attr, 9)
	add(resp.AppendBulkString(attr, "reply"))
	add(resp.AppendBulkString(nil, strings.Repeat("z", 200_000)))
	add(resp.AppendSimple(nil, strings.Repeat("s", 5000)))
	return out
}

// errorReplies are replies next must report as errors, with the text it must give.
var errorReplies = map[string]string{
	"-ERR boom\r\n":              "ERR boom",
	"!7\r\nERR x y\r\n":          "ERR x y",
	"*2\r\n:1\r\n-ERR inner\r\n": "ERR inner",
}

func TestReaderMatchesReadReply(t *testing.T) {
	corpus := replyCorpus()
	for r := range errorReplies {
		corpus = append(corpus, r)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var stream []string
	for range 300 {
		stream = append(stream, corpus[rng.IntN(len(corpus))])
	}
	joined := strings.Join(stream, "")
	// The reference must agree with the stream as built, so the boundaries below are the real ones.
	ref := bufio.NewReader(strings.NewReader(joined))
	for i, want := range stream {
		if got, err := resp.ReadReply(ref); err != nil || string(got) != want {
			t.Fatalf("resp.ReadReply disagrees on reply %d: %v", i, err)
		}
	}
	for _, src := range []io.Reader{strings.NewReader(joined), iotest.OneByteReader(strings.NewReader(joined)),
		iotest.HalfReader(strings.NewReader(joined))} {
		rd := newReplyReader(src, 64)
		for i, want := range stream {
			bad, err := rd.next(nil)
			if err != nil {
				t.Fatalf("reply %d (%.40q): %v", i, want, err)
			}
			var msg []byte
			if bad != nil {
				msg = bad.errText
			}
			wantMsg, isErr := errorReplies[want]
			if isErr != (bad != nil) || string(msg) != wantMsg {
				t.Fatalf("reply %d (%.40q): error text %q, want %q", i, want, msg, wantMsg)
			}
		}
		if _, err := rd.next(nil); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("after the last reply: err = %v, want io.ErrUnexpectedEOF", err)
		}
	}
}

func TestReaderRejectsMalformed(t *testing.T) {
	f := func(in string, want error) {
		t.Helper()
		_, err := newReplyReader(strings.NewReader(in), 16).next(nil)
		if !errors.Is(err, want) {
			t.Fatalf("next(%.40q) err = %v, want %v", in, err, want)
		}
	}
	f("", io.ErrUnexpectedEOF)
	f("+OK", io.ErrUnexpectedEOF)
	f("$5\r\nab", io.ErrUnexpectedEOF)
	f("*2\r\n:1\r\n", io.ErrUnexpectedEOF)
	f("+OK\n", errMalformed)
	f("\r\n", errMalformed)
	f("?x\r\n", errMalformed)
	f("$x\r\n", errMalformed)
	f("$-2\r\n", errMalformed)
	f("*-2\r\n", errMalformed)
	f("$3\r\nabcde", errMalformed)
	f("!3\r\nabcde", errMalformed)
	f("$1000000000000000\r\n", errMalformed)
	f("+"+strings.Repeat("a", maxLine+10), errLongLine)
}

func TestReaderAllocatesNothing(t *testing.T) {
	reply := resp.AppendArrayLen(nil, 3)
	reply = resp.AppendBulkString(reply, strings.Repeat("v", 256))
	reply = resp.AppendNull(reply, 2)
	reply = resp.AppendInt(reply, 7)
	src := &repeatReader{chunk: bytes.Repeat(reply, 30)}
	rd := newReplyReader(src, 4096)
	e, err := parseExpect("array:3", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.allowMisses() // the null in the middle
	allocs := testing.AllocsPerRun(1000, func() {
		if bad, err := rd.next(e); bad != nil || err != nil {
			t.Fatal(bad, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("next allocates %v times per reply", allocs)
	}
}

// repeatReader returns chunk over and over, split wherever the reader's buffer ends.
type repeatReader struct {
	chunk []byte
	at    int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.chunk[r.at:])
	r.at = (r.at + n) % len(r.chunk)
	return n, nil
}
