package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/hotkv/hotkv/net/resp"
)

// MaxBatch bounds the commands parsed into one batch, and with it a batch's memory.
const MaxBatch = 1024

// batchOutputTarget is the reply bytes a batch aims at. A connection whose replies are large
// parses fewer commands per batch, so a client that pipelines big reads without reading its
// replies holds about this much output before the socket blocks the connection (backpressure),
// not a batch's worth of large values.
const batchOutputTarget = 4 << 20

// firstBatchLimit is the command limit before a connection's reply sizes are known. It is small
// because that batch may run on a netpoll poller, where every other connection of the poller
// waits for it: 8 GETs of 1 MB values are 8 MB of replies to build and copy there, where 32 made
// another client wait seconds under the race detector (testfuzz TestBackpressureSlowReader).
// Later batches follow batchOutputTarget.
const firstBatchLimit = 8

// Stream is the transport side of a connection as the pipeline needs it (net/transport.Conn).
// Peek's bytes stay valid until Release. Serve is called again whenever new bytes arrive, so a
// partial command may be left buffered.
type Stream interface {
	Len() int
	Peek(n int) ([]byte, error)
	Skip(n int) error
	Release() error
	Write(p []byte) error
	// Inline reports whether Serve runs where it must not block (a netpoll poller): a batch
	// that may wait is then left unrun and Serve returns ErrWouldBlock, to be called again
	// where waiting is allowed.
	Inline() bool
	// Fill reads, without waiting, bytes the peer has already sent beyond the buffered ones and
	// reports whether it added any. Serve calls it when the buffer ends in a partial command, so
	// that a batch cut in two by the transport's read runs whole, with one write of its replies
	// instead of two. A stream that cannot (or reads everything it can anyway) returns false.
	Fill() bool
}

// Env is what the stages need from the command layer and the server.
type Env struct {
	Group *Group
	// Route resolves s (its Args are set): it fills Cmd, DB, Proto and Silent from the client's
	// state, answers connection commands and errors into s.Reply, and sets s.Target.
	Route func(client any, s *Slot)
	// Barrier runs a barrier slot on the connection. (Slots targeted at one shard are run by the
	// Group's executor, the exec func given to NewGroup.)
	Barrier func(s *Slot)
	// Limits returns the parser limits for the client now (they change with AUTH and CONFIG SET).
	Limits func(client any) *resp.Limits
	// QueryBufferLimit returns client-query-buffer-limit in bytes.
	QueryBufferLimit func() int
	// BeginBatch, when set, is called before a batch is routed.
	BeginBatch func(client any, now int64)
	// MayBlock, when set, reports whether a command may wait inside Serve (a blocking command,
	// a paused client). Inline streams do not run a batch holding one (see Stream.Inline).
	MayBlock func(client any, args [][]byte) bool
	// Completed, when set, is called with the slots that have completed since the last call, in
	// order: before a barrier runs (the slots before it) and once the batch's work is done (the
	// rest), always before the batch's replies are written. The command layer delivers the
	// slots' Effects there, so that they leave in request order whatever order the shards ran in.
	Completed func(client any, slots []Slot)
	// TakePushes, when set, appends to dst the push messages other goroutines queued for the
	// client (pub/sub messages, invalidations) and returns it; Serve writes them first, so they
	// leave between two batches' replies, never inside one.
	TakePushes func(client any, dst []byte) []byte
	// Buffered, when set, is told how many unparsed bytes (a partial command) the connection holds
	// whenever that changes between Serves: CLIENT LIST's qbuf.
	Buffered func(client any, n int)
	// Closing reports whether the client must be closed once its replies are written (QUIT,
	// CLIENT KILL, a panicking command). It is checked after each command: later commands of
	// the batch are then dropped.
	Closing func(client any) bool
	// Durable, when set, is called before Completed delivers slots' effects (final false: the
	// slots before a barrier) and before the batch's replies are written (final true). The
	// server waits there, under appendfsync always, until the writes the replies may depend on
	// are fsynced. False means they never will be (the AOF was closed short of them): the
	// replies are not written and the connection is closed (ErrNotDurable).
	Durable func(client any, final bool) bool
	// NetBytes, when set, is told the bytes of the commands parsed (before their batch runs) and
	// the bytes written (at the end of Serve): INFO's total_net_input_bytes and
	// total_net_output_bytes. At most a call a batch and one a Serve, counted in the connection,
	// so no counter is shared per command.
	NetBytes func(client any, in, out int)
}

// ErrClose asks the transport to close the connection after its replies were written.
var ErrClose = errors.New("connection closed by command")

// ErrNotDurable is returned by Serve when Env.Durable refused a batch's replies.
var ErrNotDurable = errors.New("writes could not be made durable")

// ErrWouldBlock is returned by Serve on an inline stream when the next batch may wait: nothing
// of it ran, and its bytes stay buffered for the next Serve.
var ErrWouldBlock = errors.New("batch may block")

// ErrQueryBuffer is returned when a client's pending request exceeds client-query-buffer-limit.
var ErrQueryBuffer = errors.New("client reached max query buffer length")

// Conn is a connection's pipeline state. Serve is called by one goroutine at a time.
type Conn struct {
	env    *Env
	stream Stream
	Client any
	batch  *Batch
	out    []byte
	need   int // bytes a partial command needs before parsing it again is worth it
	shown  int // the buffered byte count last given to Env.Buffered
	limit  int // commands per batch, adapted to reply sizes
	netIn  int // bytes parsed and written in this Serve, for Env.NetBytes
	netOut int
}

// NewConn returns the pipeline state of a new connection.
func NewConn(env *Env, stream Stream, client any) *Conn {
	return &Conn{env: env, stream: stream, Client: client, batch: newBatch(len(env.Group.Shards)),
		limit: firstBatchLimit}
}

// Serve processes every complete command buffered on the stream and returns, leaving a partial
// command buffered for the next call. A non-nil error means the connection must be closed.
func (c *Conn) Serve() error {
	err := c.serve()
	c.flushNet()
	return err
}

// flushNet hands the bytes counted since the last call to Env.NetBytes.
func (c *Conn) flushNet() {
	if c.netIn|c.netOut != 0 && c.env.NetBytes != nil {
		c.env.NetBytes(c.Client, c.netIn, c.netOut)
	}
	c.netIn, c.netOut = 0, 0
}

// write writes p to the stream, counting it.
func (c *Conn) write(p []byte) error {
	c.netOut += len(p)
	return c.stream.Write(p)
}

func (c *Conn) serve() error {
	if c.env.TakePushes != nil {
		if out := c.env.TakePushes(c.Client, c.out[:0]); len(out) > 0 {
			c.out = out
			if err := c.write(out); err != nil {
				return err
			}
		}
	}
	if c.stream.Len() < c.need {
		return nil // Parse would rescan the partial command and find it still incomplete
	}
	c.need = 0
	// One Fill per call: a client streaming a long pipeline must not keep the transport (a netpoll
	// poller, with other connections waiting) reading from it for as long as its bytes keep coming.
	filled := false
	for c.stream.Len() > 0 {
		buf, err := c.stream.Peek(c.stream.Len())
		if err != nil {
			return err
		}
		consumed, need, perr := c.parse(buf)
		if need > 0 && c.batch.n < c.limit && !filled && c.stream.Fill() {
			filled = true
			// Peeked slices stay valid across a read (the transport's buffer never rewrites
			// bytes below its end before Release), so parsing just continues.
			if buf, err = c.stream.Peek(c.stream.Len()); err != nil {
				return err
			}
			var more int
			more, need, perr = c.parse(buf[consumed:])
			consumed += more
		}
		if c.batch.n > 0 && c.mayBlock() {
			c.batch.truncate(0)
			c.stream.Release()
			return ErrWouldBlock
		}
		if err := c.stream.Skip(consumed); err != nil {
			return err
		}
		c.netIn += consumed
		c.flushNet() // before the batch runs: an INFO in it counts its own bytes, as Redis's read did
		if c.batch.n > 0 {
			if err := c.run(); err != nil {
				c.stream.Release()
				return err
			}
		}
		if err := c.stream.Release(); err != nil {
			return err
		}
		if perr != nil {
			c.out = resp.AppendError(c.out[:0], "ERR "+perr.Msg)
			c.write(c.out)
			return perr
		}
		if need > 0 {
			// A partial command stays buffered; the transport calls Serve again when more
			// bytes arrive. Redis closes a client whose pending request outgrows the limit.
			if need > c.env.QueryBufferLimit() || c.stream.Len() > c.env.QueryBufferLimit() {
				return ErrQueryBuffer
			}
			c.need = need
			c.showBuffered()
			return nil
		}
	}
	c.showBuffered()
	return nil
}

// showBuffered reports the bytes left buffered to Env.Buffered when they changed.
func (c *Conn) showBuffered() {
	if n := c.stream.Len(); n != c.shown && c.env.Buffered != nil {
		c.shown = n
		c.env.Buffered(c.Client, n)
	}
}

// mayBlock reports whether the parsed batch holds a command that may wait while the stream is
// served inline.
func (c *Conn) mayBlock() bool {
	if c.env.MayBlock == nil || !c.stream.Inline() {
		return false
	}
	for i := range c.batch.Slots[:c.batch.n] {
		if c.env.MayBlock(c.Client, c.batch.Slots[i].Args) {
			return true
		}
	}
	return false
}

// parse fills the batch from buf. need > 0 when buf ends in a partial command that needs at
// least need bytes counted from its start; perr is a protocol error after the parsed commands.
func (c *Conn) parse(buf []byte) (consumed, need int, perr *resp.ProtocolError) {
	lim := c.env.Limits(c.Client)
	for c.batch.n < c.limit && consumed < len(buf) {
		s := c.batch.next()
		args, n, nd, err := resp.Parse(s.Args, buf[consumed:], lim)
		s.Args = args
		if err != nil {
			c.batch.unparse()
			// A variable of its own: errors.As takes its address, which moves it to the heap,
			// and only this path may pay for that.
			var pe *resp.ProtocolError
			if !errors.As(err, &pe) {
				pe = &resp.ProtocolError{Msg: err.Error()}
			}
			return consumed, 0, pe
		}
		if n == 0 {
			c.batch.unparse()
			return consumed, nd, nil
		}
		consumed += n
		if len(args) == 0 {
			c.batch.unparse()
		}
	}
	return consumed, 0, nil
}

// run routes, executes and encodes the batch, then writes its replies.
func (c *Conn) run() (err error) {
	b, g := c.batch, c.env.Group
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("BUG: panic in pipeline: %v", r)
		}
		b.reset()
	}()
	b.Now = time.Now().UnixNano()
	b.Rerun = c.env.Barrier
	if c.env.BeginBatch != nil {
		c.env.BeginBatch(c.Client, b.Now)
	}
	done := 0 // slots handed to Completed
	durable := true
	completed := func(to int) {
		if c.env.Durable != nil && durable {
			durable = c.env.Durable(c.Client, to == b.n)
		}
		if c.env.Completed != nil && to > done {
			c.env.Completed(c.Client, b.Slots[done:to])
		}
		done = to
	}
	for i := range b.Slots[:b.n] {
		s := &b.Slots[i]
		s.Client = c.Client
		c.env.Route(c.Client, s)
		switch {
		case s.Target >= 0:
			b.add(i, int32(s.Target))
			if s.Ends {
				b.flush(g)
			}
		case s.Target == TargetBarrier:
			b.flush(g)
			completed(i)
			c.env.Barrier(s)
		}
		if c.env.Closing(c.Client) {
			// QUIT (or a kill): commands after it are not run, as in Redis.
			b.truncate(i + 1)
			break
		}
	}
	b.flush(g)
	completed(b.n)
	if !durable {
		return ErrNotDurable
	}
	out := c.out[:0]
	for i := range b.Slots[:b.n] {
		if s := &b.Slots[i]; !s.Silent {
			out = append(out, s.Reply...)
		}
	}
	c.out = out
	c.adaptLimit(len(out), b.n)
	if len(out) > 0 {
		if err := c.write(out); err != nil {
			return err
		}
	}
	if cap(c.out) > 1<<20 {
		c.out = nil
	}
	if c.env.Closing(c.Client) {
		return ErrClose
	}
	return nil
}

// adaptLimit sets the next batch's command limit from this batch's average reply size.
func (c *Conn) adaptLimit(outBytes, commands int) {
	if commands == 0 {
		return
	}
	avg := max(outBytes/commands, 1)
	c.limit = min(max(batchOutputTarget/avg, 1), MaxBatch)
}
