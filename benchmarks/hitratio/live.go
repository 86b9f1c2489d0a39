package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// conn is one pipelined connection speaking just enough RESP2 for GET, SET, CONFIG and INFO.
type conn struct {
	c  net.Conn
	w  *bufio.Writer
	r  *bufio.Reader
	to time.Duration
}

func dial(addr string) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, w: bufio.NewWriterSize(c, 256<<10), r: bufio.NewReaderSize(c, 256<<10), to: 60 * time.Second}, nil
}

func (c *conn) send(args ...string) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// sendKV writes a two- or three-argument command with the key and value as bytes (no formatting
// of the value on the hot path).
func (c *conn) sendKV(cmd string, key []byte, val []byte) {
	n := 2
	if val != nil {
		n = 3
	}
	c.w.WriteString("*" + strconv.Itoa(n) + "\r\n$" + strconv.Itoa(len(cmd)) + "\r\n" + cmd + "\r\n$")
	c.w.WriteString(strconv.Itoa(len(key)))
	c.w.WriteString("\r\n")
	c.w.Write(key)
	c.w.WriteString("\r\n")
	if val != nil {
		c.w.WriteString("$" + strconv.Itoa(len(val)) + "\r\n")
		c.w.Write(val)
		c.w.WriteString("\r\n")
	}
}

func (c *conn) flush() error {
	c.c.SetDeadline(time.Now().Add(c.to))
	return c.w.Flush()
}

// errReply is a server's error reply.
type errReply string

func (e errReply) Error() string { return string(e) }

// reply reads one reply: a simple string, error, integer, or bulk string (nil for a null bulk);
// arrays are read and dropped. A bulk's bytes are returned only when keep is set.
func (c *conn) reply(keep bool) (string, bool, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return "", false, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return "", false, fmt.Errorf("bad reply line %q", line)
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+', ':':
		return body, true, nil
	case '-':
		return "", false, errReply(body)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", false, err
		}
		if n < 0 {
			return "", false, nil
		}
		if !keep {
			_, err = c.r.Discard(n + 2)
			return "", true, err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return "", false, err
		}
		return string(b[:n]), true, nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", false, err
		}
		for range n {
			if _, _, err := c.reply(false); err != nil {
				var e errReply
				if !errors.As(err, &e) {
					return "", false, err
				}
			}
		}
		return "", n >= 0, nil
	}
	return "", false, fmt.Errorf("unknown reply type %q", line[0])
}

func (c *conn) do(args ...string) (string, error) {
	c.send(args...)
	if err := c.flush(); err != nil {
		return "", err
	}
	s, _, err := c.reply(true)
	return s, err
}

// infoField reads one field of INFO section.
func (c *conn) infoField(section, field string) string {
	s, err := c.do("INFO", section)
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return "?"
}

// runLive plays the trace against c.addr: rounds of c.pipeline GETs, then one SET per miss. A SET
// refused (OOM under noeviction) counts in set-errors and the run goes on.
func runLive(c config, out, progress io.Writer) error {
	cn, err := dial(c.addr)
	if err != nil {
		return err
	}
	defer cn.c.Close()
	for _, cmd := range [][]string{
		{"FLUSHALL"},
		{"CONFIG", "SET", "maxmemory", c.maxmemory},
		{"CONFIG", "SET", "maxmemory-policy", c.policy},
		{"CONFIG", "RESETSTAT"},
	} {
		if len(cmd) == 4 && cmd[3] == "" {
			continue
		}
		if _, err := cn.do(cmd...); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(cmd, " "), err)
		}
	}
	policy, _ := cn.do("CONFIG", "GET", "maxmemory-policy") // an array: read only to check the server answers
	_ = policy
	val := make([]byte, c.value)
	for i := range val {
		val[i] = 'v'
	}
	t := c.newTrace()
	ids := make([]uint64, c.pipeline)
	scans := make([]bool, c.pipeline)
	keys := make([][]byte, c.pipeline)
	miss := make([]int, 0, c.pipeline)
	var hits, counted, zipfHits, zipfN, setErrs int64
	var lastSetErr string
	start, tick := time.Now(), time.Now()
	for done := int64(0); done < c.requests; {
		n := int(min(int64(c.pipeline), c.requests-done))
		for i := range n {
			ids[i], scans[i] = t.next()
			keys[i] = strconv.AppendUint(append(keys[i][:0], "k:"...), ids[i], 10)
			cn.sendKV("GET", keys[i], nil)
		}
		if err := cn.flush(); err != nil {
			return err
		}
		miss = miss[:0]
		for i := range n {
			_, ok, err := cn.reply(false)
			if err != nil {
				return fmt.Errorf("GET: %w", err)
			}
			if !ok {
				miss = append(miss, i)
			}
			if done+int64(i) < c.warmup {
				continue
			}
			counted++
			if !scans[i] {
				zipfN++
			}
			if ok {
				hits++
				if !scans[i] {
					zipfHits++
				}
			}
		}
		for _, i := range miss {
			cn.sendKV("SET", keys[i], val)
		}
		if err := cn.flush(); err != nil {
			return err
		}
		for range miss {
			if _, _, err := cn.reply(false); err != nil {
				var e errReply
				if !errors.As(err, &e) {
					return fmt.Errorf("SET: %w", err)
				}
				setErrs++
				lastSetErr = e.Error()
			}
		}
		done += int64(n)
		if progress != nil && time.Since(tick) > time.Second {
			tick = time.Now()
			el := time.Since(start).Seconds()
			fmt.Fprintf(progress, "%s %s: %d/%d requests (%.0f/s), hit %.4f\n", c.label, c.policy, done, c.requests,
				float64(done)/el, float64(hits)/max(1, float64(counted)))
		}
	}
	el := time.Since(start)
	used := cn.infoField("memory", "used_memory")
	evicted := cn.infoField("stats", "evicted_keys")
	dbsize, _ := cn.do("DBSIZE")
	fmt.Fprintf(out, "RESULT model=%s policy=%s maxmemory=%s %s value=%d pipeline=%d hit=%.4f zipf-hit=%.4f used_memory=%s keys=%s evicted_keys=%s set-errors=%d seconds=%.1f\n",
		c.label, c.policy, c.maxmemory, c.describe(), c.value, c.pipeline,
		float64(hits)/max(1, float64(counted)), float64(zipfHits)/max(1, float64(zipfN)),
		used, dbsize, evicted, setErrs, el.Seconds())
	if setErrs > 0 {
		fmt.Fprintf(progress, "%s: %d SETs refused, the last: %s\n", c.label, setErrs, lastSetErr)
	}
	return nil
}
