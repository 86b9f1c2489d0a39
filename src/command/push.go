package command

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/pubsub"
)

// Push messages. Other goroutines (publishers, the cron) never write to a connection: they
// append whole messages to its client's outbox under the outbox's lock and Wake the connection,
// whose own goroutine writes the outbox at the start of its next Serve (Env.TakePushes), between
// two batches' replies (net/transport's Conn says who may write).

// pushBox is a client's outbox.
type pushBox struct {
	mu     sync.Mutex
	buf    []byte
	size   atomic.Int64 // len(buf), read without the lock
	closed bool         // over a limit: the client is being closed, nothing more is queued
}

// OutputLimit is one class of client-output-buffer-limit: the connection is closed when its
// pending output reaches Hard, or stays over Soft for more than SoftSeconds (client_limits.go).
type OutputLimit struct {
	Hard, Soft  int64
	SoftSeconds int64
}

// deliver is the client's pubsub.Subscriber: it queues a message in the client's protocol and
// reports whether the connection needs a Wake (its outbox was empty: else the Serve a Wake
// started will take this message too).
func (cl *Client) deliver(kind pubsub.Kind, pattern, channel, msg []byte) bool {
	proto := int(cl.shown.proto.Load())
	b := &cl.push
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	wake := len(b.buf) == 0
	word := kindNames[kind][2]
	if pattern != nil {
		b.buf = appendPushLen(b.buf, proto, 4)
		b.buf = resp.AppendBulkString(b.buf, word)
		b.buf = resp.AppendBulk(b.buf, pattern)
	} else {
		b.buf = appendPushLen(b.buf, proto, 3)
		b.buf = resp.AppendBulkString(b.buf, word)
	}
	b.buf = resp.AppendBulk(b.buf, channel)
	b.buf = resp.AppendBulk(b.buf, msg)
	b.size.Store(int64(len(b.buf)))
	over := cl.overLimitLocked(b)
	b.mu.Unlock()
	if over {
		cl.closeForOutput()
		return false
	}
	return wake
}

// wake is the client's pubsub.Subscriber.Wake.
func (cl *Client) wake() {
	if cl.Wake != nil {
		cl.Wake()
	}
}

// wakeSubscribers wakes the subscribers cl's commands delivered to (once per batch).
func (cl *Client) wakeSubscribers() {
	for i, s := range cl.toWake {
		s.Wake()
		cl.toWake[i] = nil
	}
	cl.toWake = cl.toWake[:0]
}

// overLimitLocked checks the client's output, the outbox and what its transport has not sent
// yet, against its class's client-output-buffer-limit, as Redis's checkClientOutputBufferLimits
// does when a reply is added. The client cron checks the same for output that is not growing.
func (cl *Client) overLimitLocked(b *pushBox) bool {
	out := int64(len(b.buf))
	if f := cl.pending.Load(); f != nil {
		_, pout := (*f)()
		out += pout
	}
	if overOutputLimit(cl.e.limitFor(cl), out, &cl.obufSoftSince, time.Now().UnixNano()) {
		b.closed = true
		return true
	}
	return false
}

// closeForOutput closes a client whose pending pushes went over its limit, with Redis's log line.
func (cl *Client) closeForOutput() {
	v := viewOf(cl, false, nil)
	line := appendClientLine(nil, &v, time.Now().UnixNano())
	slog.Warn("Client " + string(line[:len(line)-1]) +
		" scheduled to be closed ASAP for overcoming of output buffer limits.")
	cl.e.stats.outputLimitDisconnects.Add(1)
	cl.Kill()
}

// takePushes appends the queued pushes to dst and empties the outbox.
func (cl *Client) takePushes(dst []byte) []byte {
	b := &cl.push
	b.mu.Lock()
	dst = append(dst, b.buf...)
	if cap(b.buf) > 64<<10 {
		b.buf = nil
	} else {
		b.buf = b.buf[:0]
	}
	b.size.Store(0)
	b.mu.Unlock()
	return dst
}

// TakePushes returns the client's queued pushes (appended to dst) for its connection to write.
func (e *Engine) TakePushes(cl *Client, dst []byte) []byte {
	if cl.aclRecheck.Load() { // its user's channel rules changed (acl.go)
		e.aclRecheckSubs(cl)
	}
	if cl.push.size.Load() == 0 {
		return dst
	}
	return cl.takePushes(dst)
}

// completed is the pipeline's Env.Completed: it publishes the keyspace events the slots raised,
// in request order.
func (e *Engine) completed(cl *Client, slots []pipeline.Slot) {
	defer cl.wakeSubscribers()
	defer e.broadcastPending()
	for i := range slots {
		s := &slots[i]
		if len(s.Effects) == 0 {
			continue
		}
		e.publishEvents(cl, s.Effects)
		s.Effects = s.Effects[:0]
		if cl.push.size.Load() > 0 && !s.Silent {
			// Events of the client's own writes that it subscribes to (RESP3): before the reply,
			// as Redis sends them.
			s.Reply = append(cl.takePushes(nil), s.Reply...)
		}
	}
}

// publishEvents publishes encoded keyspace events (effects.go) on their __keyspace@ and
// __keyevent@ channels, as notify-keyspace-events asks.
func (e *Engine) publishEvents(cl *Client, events []byte) {
	var woken *[]*pubsub.Subscriber // nil: the cron's, woken at once
	if cl != nil {
		woken = &cl.toWake
	}
	flags := Class(e.notify.Load())
	var chBuf [128]byte
	e.eventsMu.Lock()
	defer e.eventsMu.Unlock()
	for len(events) > 0 {
		var ev event
		ev, events = nextEvent(events)
		if flags&NotifyKeyspace != 0 {
			ch := append(chBuf[:0], "__keyspace@"...)
			ch = strconv.AppendInt(ch, int64(ev.db), 10)
			ch = append(ch, "__:"...)
			ch = append(ch, ev.key...)
			e.PubSub.Publish(pubsub.Channel, ch, ev.name, woken)
		}
		if flags&NotifyKeyevent != 0 {
			ch := append(chBuf[:0], "__keyevent@"...)
			ch = strconv.AppendInt(ch, int64(ev.db), 10)
			ch = append(ch, "__:"...)
			ch = append(ch, ev.name...)
			e.PubSub.Publish(pubsub.Channel, ch, ev.key, woken)
		}
	}
}
