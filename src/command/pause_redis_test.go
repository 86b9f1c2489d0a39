package command

import (
	"bufio"
	"fmt"
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

	sends := func(dial func() func(args ...string) string, admin func(args ...string) string) ([]bool, []string) {
		for _, c := range setup {
			admin(c...)
		}
		conns := make([]func(args ...string) string, len(cmds)) // a connection for each
		for i := range conns {
			conns[i] = dial()
		}
		return heldByPause(t, admin, len(cmds), func(i int) string { return conns[i](cmds[i]...) },
			func(i int) string { return fmt.Sprintf("%q", cmds[i]) })
	}
	radmin := redisSender(t, addr)()
	radmin("FLUSHALL")
	rWaited, rReplies := sends(redisSender(t, addr), radmin)
	e := newTestEngine()
	hWaited, hReplies := sends(hotkvSender(t, e), hotkvSender(t, e)())

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
	run := func(dial func() func(args ...string) string, admin func(args ...string) string) ([]bool, []string) {
		conns := make([]func(args ...string) string, len(queues))
		for i, q := range queues {
			conns[i] = dial()
			conns[i]("MULTI")
			for _, c := range q {
				conns[i](c...)
			}
		}
		return heldByPause(t, admin, len(queues), func(i int) string { return conns[i]("EXEC") },
			func(i int) string { return fmt.Sprintf("EXEC of %q", queues[i]) })
	}
	radmin := redisSender(t, addr)()
	radmin("FLUSHALL")
	rWaited, rReplies := run(redisSender(t, addr), radmin)
	e := newTestEngine()
	hWaited, hReplies := run(hotkvSender(t, e), hotkvSender(t, e)())
	for i, q := range queues {
		if rWaited[i] != hWaited[i] || rReplies[i] != hReplies[i] {
			t.Errorf("EXEC of %q: HotKV held %v replied %q; Redis held %v replied %q", q, hWaited[i], hReplies[i], rWaited[i], rReplies[i])
		}
	}
	if !rWaited[0] || rWaited[1] {
		t.Errorf("Redis held %v: the test's premise (a write's EXEC held, a read's not) does not hold", rWaited)
	}
}

// heldByPause pauses writes (CLIENT PAUSE 10000 WRITE through admin), starts the n sends at
// once, and says which of them had no reply 300 ms later; then it unpauses and returns every
// reply, failing the test on a send still held 10 s after the UNPAUSE (named by what).
func heldByPause(t *testing.T, admin func(args ...string) string, n int, send func(i int) string, what func(i int) string) ([]bool, []string) {
	t.Helper()
	admin("CLIENT", "PAUSE", "10000", "WRITE")
	outs := make([]chan string, n)
	for i := range outs {
		outs[i] = make(chan string, 1)
		go func() { outs[i] <- send(i) }()
	}
	time.Sleep(300 * time.Millisecond)
	waited := make([]bool, n)
	replies := make([]string, n)
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
				t.Fatalf("%s still held after CLIENT UNPAUSE", what(i))
			}
		}
	}
	return waited, replies
}

// redisSender returns a dialer of connections to the redis-server at addr, each a function
// that sends one command and returns its raw reply (or the read error's text); the
// connections close when the test ends.
func redisSender(t *testing.T, addr string) func() func(args ...string) string {
	return func() func(args ...string) string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(30 * time.Second))
		r := bufio.NewReader(c)
		return func(args ...string) string {
			c.Write(encodeCommand(args))
			raw, err := resptest.ReadRaw(r)
			if err != nil {
				return err.Error()
			}
			return string(raw)
		}
	}
}

// hotkvSender is redisSender for connections to engine e.
func hotkvSender(t *testing.T, e *Engine) func() func(args ...string) string {
	return func() func(args ...string) string {
		tc := newTestConn(t, e)
		return func(args ...string) string { out, _ := tc.send(encodeCommand(args)); return string(out) }
	}
}
