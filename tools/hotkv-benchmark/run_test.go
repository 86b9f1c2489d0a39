package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp"
)

// startRedis starts a redis-server of this test's own on a free loopback port and returns the port;
// the test is skipped where redis-server is not installed.
func startRedis(t *testing.T) int {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 100 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return 0
}

// ask sends one command and returns its raw reply.
func ask(t *testing.T, port int, args ...string) string {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := resp.AppendArrayLen(nil, len(args))
	for _, a := range args {
		req = resp.AppendBulkString(req, a)
	}
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	reply, err := resp.ReadReply(bufio.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	return string(reply)
}

func testConfig(t *testing.T, port int, args ...string) *config {
	t.Helper()
	cfg, err := parseFlags(append([]string{"--port", fmt.Sprint(port), "--quiet"}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestRunAgainstRedis(t *testing.T) {
	port := startRedis(t)
	cfg := testConfig(t, port, "--prefill", "--keys", "2000", "--threads", "2", "--clients", "3",
		"--pipeline", "7", "--data-size", "100", "--requests", "3000", "--ratio", "1:2:1",
		"--command", "SET key:__key__ __data__", "--command", "GET key:__key__",
		"--command", "MGET "+strings.Repeat("key:__key__ ", 8))
	res, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Prefill == nil || res.Prefill.Keys != 2000 {
		t.Fatalf("prefill = %+v, want 2000 keys", res.Prefill)
	}
	if got := ask(t, port, "DBSIZE"); got != ":2000\r\n" {
		t.Fatalf("DBSIZE after the prefill = %q", got)
	}
	if got := ask(t, port, "STRLEN", "key:1999"); got != ":100\r\n" {
		t.Fatalf("STRLEN key:1999 = %q, want the data size", got)
	}
	if res.Ops != 3000 || res.PerCommand[0].Ops+res.PerCommand[1].Ops+res.PerCommand[2].Ops != 3000 {
		t.Fatalf("ops %d, per command %+v", res.Ops, res.PerCommand)
	}
	if res.PerCommand[1].Ops < 1400 || res.OpsPerSec <= 0 || res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 {
		t.Fatalf("implausible result %+v", res)
	}
}

// A prefill command with two __key__ loads every key once, the same number in both places (it
// drew a key for each, loading 500 of 1,000 keys, the odd numbers into the even keys' elements).
func TestPrefillOneKeyPerCommand(t *testing.T) {
	port := startRedis(t)
	cfg := testConfig(t, port, "--prefill-only", "--keys", "1000", "--clients", "3", "--prefill-pipeline", "7",
		"--prefill-command", "HSET h:__key__ f v__key__", "--prefill-expect", "int:1")
	res, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Prefill == nil || res.Prefill.Keys != 1000 {
		t.Fatalf("prefill = %+v, want 1000 keys", res.Prefill)
	}
	if got := ask(t, port, "DBSIZE"); got != ":1000\r\n" {
		t.Fatalf("DBSIZE after the prefill = %q", got)
	}
	for _, k := range []string{"0", "1", "998", "999"} {
		if got := ask(t, port, "HGET", "h:"+k, "f"); got != "$"+strconv.Itoa(1+len(k))+"\r\nv"+k+"\r\n" {
			t.Fatalf("HGET h:%s f = %q", k, got)
		}
	}
}

func TestRunRESP3AndDuration(t *testing.T) {
	port := startRedis(t)
	cfg := testConfig(t, port, "--resp", "3", "--duration", "300ms", "--distribution", "zipf", "--pipeline", "4",
		"--clients", "2", "--command", "HSET h:__key__ f __data__", "--command", "HGETALL h:__key__")
	start := time.Now()
	res, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second || res.Ops == 0 {
		t.Fatalf("a 300ms run took %v for %d requests", d, res.Ops)
	}
}

// An error reply fails the run with Redis's text, where redis-benchmark would count a success.
func TestRunFailsOnErrorReply(t *testing.T) {
	port := startRedis(t)
	cfg := testConfig(t, port, "--prefill", "--keys", "100", "--requests", "1000",
		"--command", "GET key:__key__", "--command", "LPUSH key:__key__ x")
	_, err := run(cfg)
	var re *replyError
	if !errors.As(err, &re) || re.command != "LPUSH" ||
		re.msg != "WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("err = %v, want LPUSH's WRONGTYPE", err)
	}
}

// A server that accepts and never answers fails the run after --timeout instead of hanging it.
func TestRunTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c)
		}
	}()
	cfg := testConfig(t, l.Addr().(*net.TCPAddr).Port, "--timeout", "1s", "--command", "PING")
	start := time.Now()
	_, err = run(cfg)
	if err == nil || !strings.Contains(err.Error(), "no reply for 1s") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("the timeout took %v", d)
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.duration != 10*time.Second || len(cfg.commands) != 2 || cfg.ratio != "1:10" || cfg.pipeline != 1 {
		t.Fatalf("defaults: %+v", cfg)
	}
	for _, bad := range [][]string{
		{"--threads", "0"}, {"--pipeline", "0"}, {"--resp", "4"}, {"--keys", "0"},
		{"--duration", "1s", "--requests", "5"}, {"--distribution", "normal"},
		{"--command", "GET \"x"}, {"--command", "A", "--ratio", "1:1"}, {"extra"},
		{"--distribution", "zipf", "--zipf-s", "0"},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Fatalf("parseFlags(%q) accepted", bad)
		}
	}
}
