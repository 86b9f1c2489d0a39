package command

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// Which commands CLIENT PAUSE WRITE holds back, against redis-server 7.0.15: the may-replicate
// commands COMMAND does not show (PUBLISH, SPUBLISH, PFCOUNT, EVAL, EVALSHA, FCALL), and scripts
// by their declared flags. Every command is sent on its own connection during one pause; those
// that answer before the UNPAUSE were not held. The set must be Redis's.
func TestClientPauseWriteMatchesRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	t.Cleanup(stop)
	lib := "#!lua name=plib\n" +
		"redis.register_function('pw', function(k, a) return redis.call('set', 'x', '1') end)\n" +
		"redis.register_function{function_name='pr', callback=function(k, a) return 1 end, flags={'no-writes'}}"
	cmds := [][]string{
		{"PUBLISH", "ch", "m"}, {"SPUBLISH", "ch", "m"}, {"PFCOUNT", "h"}, {"GET", "a"}, {"SET", "a", "1"},
		{"EVAL", "#!lua flags=no-writes\nreturn 1", "0"}, {"EVAL", "#!lua\nreturn 1", "0"},
		{"EVAL", "return 1", "0"}, {"EVAL_RO", "return 1", "0"}, {"EVAL_RO", "#!lua\nreturn 1", "0"},
		{"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"},
		{"EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"},
		{"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"},
		{"FCALL", "pw", "0"}, {"FCALL", "pr", "0"}, {"FCALL_RO", "pr", "0"}, {"FCALL", "nosuch", "0"},
		{"SCRIPT", "LOAD", "return 2"}, {"FUNCTION", "DELETE", "nosuch"}, {"PING"},
	}
	setup := [][]string{{"FUNCTION", "LOAD", "REPLACE", lib}, {"SCRIPT", "LOAD", "return 1"}}

	held := func(send func(i int, args []string) <-chan string, admin func(args ...string) string) (map[int]bool, []string) {
		for _, c := range setup {
			admin(c...)
		}
		admin("CLIENT", "PAUSE", "10000", "WRITE")
		outs := make([]<-chan string, len(cmds))
		for i, c := range cmds {
			outs[i] = send(i, c)
		}
		time.Sleep(300 * time.Millisecond)
		waited := map[int]bool{}
		replies := make([]string, len(cmds))
		for i, ch := range outs {
			select {
			case r := <-ch:
				replies[i] = r
			default:
				waited[i] = true
			}
		}
		admin("CLIENT", "UNPAUSE")
		for i, ch := range outs {
			if waited[i] {
				select {
				case replies[i] = <-ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("%q still held after CLIENT UNPAUSE", cmds[i])
				}
			}
		}
		return waited, replies
	}

	var rconns []net.Conn
	t.Cleanup(func() {
		for _, c := range rconns {
			c.Close()
		}
	})
	rdial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		rconns = append(rconns, c)
		return c, bufio.NewReader(c)
	}
	aw, ar := rdial()
	redisDo(t, aw, ar, "FLUSHALL")
	rWaited, rReplies := held(func(i int, args []string) <-chan string {
		w, r := rdial()
		ch := make(chan string, 1)
		go func() {
			w.Write(encodeCommand(args))
			raw, err := resptest.ReadRaw(r)
			if err != nil {
				ch <- err.Error()
				return
			}
			ch <- string(raw)
		}()
		return ch
	}, func(args ...string) string { return redisDo(t, aw, ar, args...) })

	e := newTestEngine()
	admin := newTestConn(t, e)
	hWaited, hReplies := held(func(i int, args []string) <-chan string {
		tc := newTestConn(t, e)
		ch := make(chan string, 1)
		go func() {
			out, _ := tc.send(encodeCommand(args))
			ch <- string(out)
		}()
		return ch
	}, func(args ...string) string { return admin.do(args...) })

	for i, c := range cmds {
		name := strings.ReplaceAll(strings.Join(c, " "), "\n", `\n`)
		if rWaited[i] != hWaited[i] {
			t.Errorf("%s: held back by CLIENT PAUSE WRITE: HotKV %v, Redis %v", name, hWaited[i], rWaited[i])
		}
		if hReplies[i] != rReplies[i] {
			t.Errorf("%s: HotKV replied %q, Redis %q", name, hReplies[i], rReplies[i])
		}
	}
}

// EXEC under CLIENT PAUSE WRITE, against redis-server 7.0.15: a transaction queued before the
// pause with a write in it is held back until the pause ends; one of reads only runs.
func TestClientPauseWriteExecMatchesRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	t.Cleanup(stop)
	queues := [][][]string{{{"SET", "k", "v"}}, {{"GET", "k"}}, {{"GET", "j"}, {"INCR", "n"}}} // the held ones touch disjoint keys: their order after UNPAUSE is free
	type conn struct{ send func(args ...string) string }
	run := func(dial func() conn, admin func(args ...string) string) ([]bool, []string) {
		conns := make([]conn, len(queues))
		for i, q := range queues {
			conns[i] = dial()
			conns[i].send("MULTI")
			for _, c := range q {
				conns[i].send(c...)
			}
		}
		admin("CLIENT", "PAUSE", "10000", "WRITE")
		outs := make([]chan string, len(queues))
		for i := range queues {
			outs[i] = make(chan string, 1)
			go func() { outs[i] <- conns[i].send("EXEC") }()
		}
		time.Sleep(300 * time.Millisecond)
		waited := make([]bool, len(queues))
		replies := make([]string, len(queues))
		for i, ch := range outs {
			select {
			case replies[i] = <-ch:
			default:
				waited[i] = true
			}
		}
		admin("CLIENT", "UNPAUSE")
		for i, ch := range outs {
			if waited[i] {
				select {
				case replies[i] = <-ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("EXEC of %q still held after CLIENT UNPAUSE", queues[i])
				}
			}
		}
		return waited, replies
	}
	var rconns []net.Conn
	t.Cleanup(func() {
		for _, c := range rconns {
			c.Close()
		}
	})
	rdial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		rconns = append(rconns, c)
		return c, bufio.NewReader(c)
	}
	aw, ar := rdial()
	redisDo(t, aw, ar, "FLUSHALL")
	rWaited, rReplies := run(func() conn {
		w, r := rdial()
		return conn{func(args ...string) string {
			w.Write(encodeCommand(args))
			raw, err := resptest.ReadRaw(r)
			if err != nil {
				return err.Error()
			}
			return string(raw)
		}}
	}, func(args ...string) string { return redisDo(t, aw, ar, args...) })
	e := newTestEngine()
	admin := newTestConn(t, e)
	hWaited, hReplies := run(func() conn {
		tc := newTestConn(t, e)
		return conn{func(args ...string) string { out, _ := tc.send(encodeCommand(args)); return string(out) }}
	}, func(args ...string) string { return admin.do(args...) })
	for i, q := range queues {
		if rWaited[i] != hWaited[i] || rReplies[i] != hReplies[i] {
			t.Errorf("EXEC of %q: HotKV held %v replied %q; Redis held %v replied %q", q, hWaited[i], hReplies[i], rWaited[i], rReplies[i])
		}
	}
	if !rWaited[0] || rWaited[1] {
		t.Errorf("Redis held %v: the test's premise (a write's EXEC held, a read's not) does not hold", rWaited)
	}
}
