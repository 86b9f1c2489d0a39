package server

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// total_net_input_bytes and total_net_output_bytes over real sockets, on HotKV and on
// redis-server 7.0.15 side by side: between two INFOs, the input grows by exactly the bytes the
// client wrote (the second INFO's request included: Redis reads it before it runs) and the
// output by exactly the bytes it read (the first INFO's reply included), on both servers.
func TestNetBytesOverSockets(t *testing.T) {
	hk := dialTestServer(t, startTestServer(t))
	servers := map[string]*testClient{"HotKV": hk}
	if rc, _ := startRedisIfInstalled(t); rc != nil {
		servers["Redis"] = rc
	}
	cmds := [][]string{
		{"SET", "k", strings.Repeat("v", 3000)}, {"GET", "k"}, {"INCR", "n"}, {"PING"},
		{"MGET", "k", "missing"}, {"NOSUCHCOMMAND", "x"}, {"HELLO", "3"}, {"GET", "k"}, {"HELLO", "2"},
	}
	for name, c := range servers {
		infoReq := string(encodeNet("INFO", "stats"))
		readAll := func() string {
			raw, err := resptest.ReadRaw(c.r)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return string(raw)
		}
		stat := func(info, field string) int64 {
			for _, line := range strings.Split(info, "\r\n") {
				if v, ok := strings.CutPrefix(line, field+":"); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					return n
				}
			}
			t.Fatalf("%s: no %s", name, field)
			return 0
		}
		c.conn.Write([]byte(infoReq))
		first := readAll()
		var wrote, read int64
		for _, cmd := range cmds {
			req := encodeNet(cmd...)
			c.conn.Write(req)
			wrote += int64(len(req))
			read += int64(len(readAll()))
		}
		c.conn.Write([]byte(infoReq))
		second := readAll()
		in := stat(second, "total_net_input_bytes") - stat(first, "total_net_input_bytes")
		out := stat(second, "total_net_output_bytes") - stat(first, "total_net_output_bytes")
		t.Logf("%s: input +%d (wrote %d + INFO %d), output +%d (read %d + first INFO %d)",
			name, in, wrote, len(infoReq), out, read, len(first))
		if in != wrote+int64(len(infoReq)) {
			t.Errorf("%s: total_net_input_bytes grew %d, the client wrote %d", name, in, wrote+int64(len(infoReq)))
		}
		if out != read+int64(len(first)) {
			t.Errorf("%s: total_net_output_bytes grew %d, the client read %d", name, out, read+int64(len(first)))
		}
	}
}

// encode is a command as RESP.
func encodeNet(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

// startRedisIfInstalled is startRedisIn in a temporary directory, or nil without redis-server.
func startRedisIfInstalled(t *testing.T) (*testClient, func()) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, nil
	}
	return startRedisIn(t, t.TempDir())
}
