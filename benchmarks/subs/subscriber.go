package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// A subscriber is one connection and its reader. Ownership: the reader goroutine (read) owns
// buf, messages, err and the flags until it closes done; then whoever waited on done reads them.
type subscriber struct {
	id               int
	conn             net.Conn
	channel, pattern []byte // one of them
	subscribed       chan<- error
	quiet, timeout   time.Duration
	buf              []byte
	r, w             int // buf[r:w] is read but not yet parsed
	confirmed        bool
	messages         int64
	err              error
	done             chan struct{}
}

func newSubscriber(id int, c net.Conn, cfg *config, subscribed chan<- error) *subscriber {
	s := &subscriber{id: id, conn: c, subscribed: subscribed, quiet: cfg.quiet, timeout: cfg.timeout,
		buf: make([]byte, cfg.bufSize), done: make(chan struct{})}
	if cfg.pattern != "" {
		s.pattern = []byte(cfg.pattern)
	} else {
		s.channel = []byte(cfg.channel)
	}
	return s
}

// subscribeCommand is the SUBSCRIBE or PSUBSCRIBE to send.
func (s *subscriber) subscribeCommand() []byte {
	cmd, arg := "SUBSCRIBE", s.channel
	if s.pattern != nil {
		cmd, arg = "PSUBSCRIBE", s.pattern
	}
	b := fmt.Appendf(nil, "*2\r\n$%d\r\n%s\r\n$%d\r\n", len(cmd), cmd, len(arg))
	b = append(b, arg...)
	return append(b, "\r\n"...)
}

// read counts messages until the stop's PING has been answered and the connection stayed quiet
// for s.quiet, or until it fails.
func (s *subscriber) read() {
	defer close(s.done)
	err := s.loop()
	if err != nil {
		err = fmt.Errorf("%w (after %d messages)", err, s.messages)
		s.conn.Close()
	}
	if !s.confirmed {
		if err == nil {
			err = errors.New("the connection ended before its subscription was confirmed")
		}
		s.subscribed <- fmt.Errorf("connection %d: %w", s.id, err) // buffered: one per connection
	}
	s.err = err
}

func (s *subscriber) loop() error {
	var drainEnd time.Time // set once the PING's reply arrived
	for {
		for s.r < s.w {
			n, f, err := parseFrame(s.buf[s.r:s.w])
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			s.r += n
			pong, err := s.handle(f)
			if err != nil {
				return err
			}
			if pong {
				if !drainEnd.IsZero() {
					return errors.New("a second reply to PING")
				}
				drainEnd = time.Now().Add(s.timeout)
			}
		}
		// Keep the partial frame, at the front; grow for a frame larger than the buffer.
		if s.r == s.w {
			s.r, s.w = 0, 0
		} else if s.r > 0 {
			s.w, s.r = copy(s.buf, s.buf[s.r:s.w]), 0
		}
		if s.w == len(s.buf) {
			s.buf = append(s.buf, make([]byte, len(s.buf))...)
		}
		if !drainEnd.IsZero() {
			if time.Now().After(drainEnd) {
				return nil // messages still coming after the stop: someone else is publishing
			}
			s.conn.SetReadDeadline(time.Now().Add(s.quiet))
		}
		n, err := s.conn.Read(s.buf[s.w:])
		s.w += n
		switch {
		case err == nil || n > 0:
			// Parse what came; a lasting error comes back with the next read.
		case !drainEnd.IsZero() && errors.Is(err, os.ErrDeadlineExceeded):
			return nil // quiet after the PING's reply: everything was counted
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fmt.Errorf("no reply to PING within %v of the stop", s.timeout)
		case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
			return fmt.Errorf("closed by the server (over client-output-buffer-limit pubsub?): %w", err)
		default:
			return err
		}
	}
}

// handle takes one frame: it counts a message, confirms the subscription, or reports the reply
// to the stop's PING.
func (s *subscriber) handle(f frame) (pong bool, err error) {
	switch string(f.kind) {
	case "message":
		if s.channel == nil || f.elems != 3 || !bytes.Equal(f.second, s.channel) {
			return false, fmt.Errorf("unexpected message on channel %q", f.second)
		}
		s.messages++
	case "pmessage":
		if s.pattern == nil || f.elems != 4 || !bytes.Equal(f.second, s.pattern) {
			return false, fmt.Errorf("unexpected pmessage for pattern %q", f.second)
		}
		s.messages++
	case "subscribe", "psubscribe":
		want, name := "subscribe", s.channel
		if s.pattern != nil {
			want, name = "psubscribe", s.pattern
		}
		if s.confirmed || string(f.kind) != want || f.elems != 3 || !bytes.Equal(f.second, name) {
			return false, fmt.Errorf("unexpected %s confirmation of %q", f.kind, f.second)
		}
		s.confirmed = true
		s.subscribed <- nil
	case "pong":
		return true, nil
	default:
		return false, fmt.Errorf("unexpected push %q with %d elements", f.kind, f.elems)
	}
	return false, nil
}

// A frame is a parsed push: its element count, the first element (the kind: message, pmessage,
// subscribe, ..., pong) and the second (the channel, or a pmessage's pattern). They point into the
// read buffer.
type frame struct {
	elems        int
	kind, second []byte
}

var pongWord = []byte("pong")

// Limits of what a push may be: pub/sub pushes have at most four elements.
const (
	maxElems = 8
	maxBulk  = 512 << 20 // proto-max-bulk-len's default
)

// parseFrame parses the frame at the start of b and returns its length in bytes, or 0 when b holds
// only part of it. Arrays (RESP2 *, RESP3 >) of bulk strings and integers are pushes; +PONG is a
// pong too; anything else fails.
func parseFrame(b []byte) (int, frame, error) {
	var f frame
	if len(b) == 0 {
		return 0, f, nil
	}
	switch b[0] {
	case '*', '>':
	case '-', '+':
		end := bytes.Index(b, []byte("\r\n"))
		if end < 0 {
			return 0, f, nil
		}
		if string(b[:end]) == "+PONG" {
			return end + 2, frame{elems: 1, kind: pongWord}, nil
		}
		if b[0] == '-' {
			return 0, f, fmt.Errorf("error reply: %s", b[1:end])
		}
		return 0, f, fmt.Errorf("unexpected reply %q", b[:end])
	default:
		return 0, f, fmt.Errorf("unexpected reply starting %q", b[:min(len(b), 20)])
	}
	count, i, err := readInt(b, 1)
	if i == 0 || err != nil {
		return 0, f, err
	}
	if count < 1 || count > maxElems {
		return 0, f, fmt.Errorf("unexpected array of %d elements", count)
	}
	f.elems = int(count)
	for e := 0; e < f.elems; e++ {
		if i >= len(b) {
			return 0, f, nil
		}
		var elem []byte
		switch b[i] {
		case '$':
			l, j, err := readInt(b, i+1)
			if j == 0 || err != nil {
				return 0, f, err
			}
			if l < 0 || l > maxBulk {
				return 0, f, fmt.Errorf("unexpected bulk length %d", l)
			}
			end := j + int(l)
			if end+2 > len(b) {
				return 0, f, nil
			}
			if b[end] != '\r' || b[end+1] != '\n' {
				return 0, f, errors.New("a bulk string not ended by CRLF")
			}
			elem, i = b[j:end], end+2
		case ':':
			_, j, err := readInt(b, i+1)
			if j == 0 || err != nil {
				return 0, f, err
			}
			i = j
		default:
			return 0, f, fmt.Errorf("unexpected element starting %q", b[i:min(len(b), i+20)])
		}
		switch e {
		case 0:
			f.kind = elem
		case 1:
			f.second = elem
		}
	}
	return i, f, nil
}

// readInt reads the decimal integer at b[i:] up to its CRLF and returns it with the index after the
// CRLF, or next = 0 when the line is not complete yet.
func readInt(b []byte, i int) (v int64, next int, err error) {
	neg := false
	if i < len(b) && b[i] == '-' {
		neg, i = true, i+1
	}
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i-start >= 18 {
			return 0, 0, errors.New("an integer too long")
		}
		v = 10*v + int64(b[i]-'0')
	}
	if i+1 >= len(b) {
		return 0, 0, nil
	}
	if i == start || b[i] != '\r' || b[i+1] != '\n' {
		return 0, 0, fmt.Errorf("a malformed integer %q", b[start:min(len(b), i+2)])
	}
	if neg {
		v = -v
	}
	return v, i + 2, nil
}
