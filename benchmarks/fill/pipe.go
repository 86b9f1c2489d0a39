package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/net/resp"
)

// Batches are cut at whichever limit comes first; inFlight batches may wait for their replies at
// once, so the server always has the next batch queued while the reader checks the previous one.
const (
	batchBytes = 64 << 10
	batchCmds  = 1024
	inFlight   = 4
)

// anyReply accepts every reply that is not an error.
const anyReply = math.MinInt64

// An expect is what one command's reply must be: the integer want, or anything but an error when
// want is anyReply; hint says what a wrong integer suggests.
type expect struct {
	cmd  string
	want int64
	hint string
}

// A flight is one batch on the wire: its commands' expectations and the members they carry.
type flight struct {
	expects []expect
	members int64
}

// pipe loads a server over one connection. The caller's goroutine encodes commands and writes
// batches; a reader goroutine checks every reply in order. Ownership: buf, expects and members
// belong to the writer until flush hands them to the reader in a flight; err and minInt belong to
// the reader until it closes done.
type pipe struct {
	conn    net.Conn
	rd      *bufio.Reader
	timeout time.Duration
	buf     []byte
	expects []expect
	members int64
	flights chan flight
	done    chan struct{}
	err     error
	minInt  int64        // the smallest integer reply (LLEN checks read it)
	acked   atomic.Int64 // members whose commands were answered: the progress
	scratch []byte
	score   []byte
}

// dial connects and starts the reader; close must be called.
func dial(addr string, timeout time.Duration) (*pipe, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", addr, err)
	}
	p := newPipe(c, timeout)
	return p, nil
}

func newPipe(c net.Conn, timeout time.Duration) *pipe {
	p := &pipe{
		conn: c, rd: bufio.NewReaderSize(c, 64*1024), timeout: timeout, minInt: math.MaxInt64,
		flights: make(chan flight, inFlight), done: make(chan struct{}),
	}
	go p.read()
	return p
}

// begin starts a command of n arguments (its name included).
func (p *pipe) begin(n int) { p.buf = resp.AppendArrayLen(p.buf, n) }

func (p *pipe) arg(b []byte) { p.buf = resp.AppendBulk(p.buf, b) }

func (p *pipe) argString(s string) { p.buf = resp.AppendBulkString(p.buf, s) }

func (p *pipe) argInt(n int64) { p.buf = resp.AppendBulkInt(p.buf, n) }

// argNamed adds prefix followed by n in decimal, such as "field:42".
func (p *pipe) argNamed(prefix string, n int64) {
	p.scratch = strconv.AppendInt(append(p.scratch[:0], prefix...), n, 10)
	p.buf = resp.AppendBulk(p.buf, p.scratch)
}

// end closes the command begun last: its reply must match want (or anyReply), and it loads members
// members. A full batch is sent.
func (p *pipe) end(cmd string, want int64, members int) error {
	return p.endExpect(expect{cmd: cmd, want: want, hint: " (was the key not empty?)"}, members)
}

// endExpect is end with the expectation spelled out.
func (p *pipe) endExpect(e expect, members int) error {
	p.expects = append(p.expects, e)
	p.members += int64(members)
	if len(p.buf) >= batchBytes || len(p.expects) >= batchCmds {
		return p.flush()
	}
	return nil
}

// flush sends the encoded batch and hands its expectations to the reader.
func (p *pipe) flush() error {
	if len(p.expects) == 0 {
		return nil
	}
	select {
	case p.flights <- flight{p.expects, p.members}:
	case <-p.done:
		return p.err
	}
	p.conn.SetWriteDeadline(time.Now().Add(p.timeout))
	if _, err := p.conn.Write(p.buf); err != nil {
		<-p.done // the reader has failed (it closes the connection) or will on the missing replies
		if p.err != nil {
			return p.err
		}
		return fmt.Errorf("cannot send: %w", err)
	}
	p.buf, p.expects, p.members = p.buf[:0], nil, 0
	return nil
}

// close sends what is left, waits for every reply and returns the first failure.
func (p *pipe) close() error {
	err := p.flush()
	close(p.flights)
	<-p.done
	p.conn.Close()
	if p.err != nil {
		return p.err
	}
	return err
}

// read checks the replies of each flight in order. On a failure it closes the connection, so
// that a writer blocked on a server that no longer reads wakes up.
func (p *pipe) read() {
	defer close(p.done)
	for f := range p.flights {
		for _, e := range f.expects {
			if err := p.check(e); err != nil {
				p.err = err
				p.conn.Close()
				return
			}
		}
		p.acked.Add(f.members)
	}
}

func (p *pipe) check(e expect) error {
	p.conn.SetReadDeadline(time.Now().Add(p.timeout))
	raw, err := resp.ReadReply(p.rd)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("cannot read the reply to %s: %w", e.cmd, err)
	}
	line := string(raw[:len(raw)-2])
	switch raw[0] {
	case '-', '!':
		return fmt.Errorf("error reply to %s: %s", e.cmd, line[1:])
	case ':':
		n, err := strconv.ParseInt(line[1:], 10, 64)
		if err != nil {
			return fmt.Errorf("bad integer reply to %s: %q", e.cmd, line)
		}
		p.minInt = min(p.minInt, n)
		if e.want != anyReply && n != e.want {
			return fmt.Errorf("%s replied %d, want %d%s", e.cmd, n, e.want, e.hint)
		}
		return nil
	}
	if e.want != anyReply {
		return fmt.Errorf("%s replied %q, want :%d", e.cmd, line, e.want)
	}
	return nil
}
