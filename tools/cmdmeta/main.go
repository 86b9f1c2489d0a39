// Command cmdmeta records Redis's command metadata for HotKV: for every top-level command of a
// running redis-server it stores the exact RESP3 replies of COMMAND INFO name and COMMAND DOCS name
// in one file (the format is described in src/command/meta). It checks that meta.ToRESP2 turns
// each reply into the server's own RESP2 reply, so the file needs no RESP2 copy.
//
//	go run ./tools/cmdmeta -out src/command/meta/redis-7.0.15.resp            # starts redis-server
//	go run ./tools/cmdmeta -addr 127.0.0.1:6379 -out /tmp/meta.resp           # uses a running one
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/src/command/meta"
)

func main() {
	addr := flag.String("addr", "", "address of a running redis-server (default: start one from PATH)")
	out := flag.String("out", "redis-"+meta.Version+".resp", "output file")
	version := flag.String("version", meta.Version, "the redis_version the server must report")
	flag.Parse()
	if err := run(*addr, *out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "cmdmeta:", err)
		os.Exit(1)
	}
}

func run(addr, out, version string) error {
	if addr == "" {
		a, stop, err := startServer()
		if err != nil {
			return err
		}
		defer stop()
		addr = a
	}
	c2, err := dial(addr, 2)
	if err != nil {
		return err
	}
	c3, err := dial(addr, 3)
	if err != nil {
		return err
	}
	if err := checkVersion(c2, version); err != nil {
		return err
	}
	names, err := topLevelNames(c3)
	if err != nil {
		return err
	}
	var file bytes.Buffer
	for _, name := range names {
		if err := record(&file, c2, c3, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	fmt.Fprintf(os.Stderr, "cmdmeta: %d commands, %d bytes\n", len(names), file.Len())
	return os.WriteFile(out, file.Bytes(), 0o644)
}

// record appends one command's record, after checking its RESP2 replies derive from the RESP3 ones.
func record(file *bytes.Buffer, c2, c3 *conn, name string) error {
	var replies [2]string
	for i, sub := range []string{"INFO", "DOCS"} {
		r3, err := c3.do("COMMAND", sub, name)
		if err != nil {
			return err
		}
		r2, err := c2.do("COMMAND", sub, name)
		if err != nil {
			return err
		}
		if conv, err := meta.ToRESP2(r3); err != nil || conv != r2 {
			return fmt.Errorf("COMMAND %s: RESP2 reply does not derive from RESP3 (%v)", sub, err)
		}
		replies[i] = r3
	}
	file.Write(resp.AppendArrayLen(nil, 3))
	file.Write(resp.AppendBulkString(nil, name))
	file.WriteString(replies[0])
	file.WriteString(replies[1])
	return nil
}

type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dial(addr string, proto int) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := &conn{c: nc, r: bufio.NewReader(nc)}
	if proto == 3 {
		if _, err := c.do("HELLO", "3"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// do sends one command and returns its raw reply; an error reply is an error.
func (c *conn) do(args ...string) (string, error) {
	b := resp.AppendArrayLen(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.c.Write(b); err != nil {
		return "", err
	}
	raw, err := resp.ReadReply(c.r)
	if err != nil {
		return "", err
	}
	if raw[0] == '-' {
		return "", errors.New(strings.TrimSpace(string(raw[1:])))
	}
	return string(raw), nil
}

func checkVersion(c *conn, want string) error {
	info, err := c.do("INFO", "server")
	if err != nil {
		return err
	}
	if !strings.Contains(info, "\r\nredis_version:"+want+"\r\n") {
		return fmt.Errorf("the server is not Redis %s (use -version to record another)", want)
	}
	return nil
}

// topLevelNames returns the server's command names without subcommands, sorted.
func topLevelNames(c *conn) ([]string, error) {
	raw, err := c.do("COMMAND", "LIST")
	if err != nil {
		return nil, err
	}
	var names []string
	lines := strings.Split(raw, "\r\n")
	for i := 1; i+1 < len(lines); i += 2 {
		if !strings.HasPrefix(lines[i], "$") {
			return nil, fmt.Errorf("unexpected COMMAND LIST reply")
		}
		if name := lines[i+1]; !strings.Contains(name, "|") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// startServer starts a throwaway redis-server from PATH on a free loopback port.
func startServer() (addr string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "cmdmeta")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait(); os.RemoveAll(dir) }
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, stop, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("redis-server did not start")
}
