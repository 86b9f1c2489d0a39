package command

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// Blocking XREAD against redis-server 7.0.15: the same script runs on Redis (several real
// connections) and on HotKV (test connections, the blocked ones in goroutines), and every reply,
// a blocked client's included, must be the same bytes. "wait" steps send a command that must
// block; "recv" reads the reply a blocked client got since; "quiet" checks it got none.

type blockStep struct {
	conn int
	op   string // "do", "wait", "recv", "quiet"
	cmd  string // {id:N} is connection N's client id
}

func TestXReadBlockingMatchesRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	t.Cleanup(stop)
	scripts := map[string][]blockStep{
		"dollar": {
			{0, "do", "XADD s 1-0 f v"},
			{1, "wait", "XREAD BLOCK 0 STREAMS s $"},
			{0, "do", "XADD s 2-0 g w"},
			{1, "recv", ""},
		},
		"missing key, several keys, served from the one added to": {
			{1, "wait", "XREAD COUNT 5 BLOCK 0 STREAMS a b c $ 0 $"},
			{0, "do", "XADD b 3-0 f v"},
			{1, "recv", ""},
		},
		"every waiter served, in order, each from its own ID": {
			{0, "do", "XADD s 5-0 f v"},
			{1, "wait", "XREAD BLOCK 0 STREAMS s 5-0"},
			{2, "wait", "XREAD BLOCK 0 STREAMS s 6-5"},
			{3, "wait", "XREAD COUNT 1 BLOCK 0 STREAMS s $"},
			{0, "do", "XADD s 6-1 f v"},
			{1, "recv", ""},
			{3, "recv", ""},
			{2, "quiet", ""},
			{0, "do", "XADD s 7-0 f v"},
			{2, "recv", ""},
		},
		"timeout, MULTI, CLIENT UNBLOCK": {
			{1, "do", "XREAD BLOCK 20 STREAMS s $"},
			{1, "do", "MULTI"},
			{1, "do", "XREAD BLOCK 0 STREAMS s $"},
			{1, "do", "EXEC"},
			{1, "wait", "XREAD BLOCK 0 STREAMS s $"},
			{0, "do", "CLIENT UNBLOCK {id:1}"},
			{1, "recv", ""},
			{1, "wait", "XREAD BLOCK 0 STREAMS s $"},
			{0, "do", "CLIENT UNBLOCK {id:1} ERROR"},
			{1, "recv", ""},
			{0, "do", "XADD s 1-0 f v"},
			{1, "do", "XREAD BLOCK 0 STREAMS s 0"},
		},
		"XREADGROUP waits for new entries, NOACK and COUNT": {
			{0, "do", "XGROUP CREATE s g $ MKSTREAM"},
			{1, "wait", "XREADGROUP GROUP g c1 BLOCK 0 STREAMS s >"},
			{2, "wait", "XREADGROUP GROUP g c2 COUNT 1 NOACK BLOCK 0 STREAMS s >"},
			{0, "do", "XADD s 1-0 f v"},
			{1, "recv", ""},
			{2, "quiet", ""},
			{0, "do", "XADD s 2-0 f v"},
			{2, "recv", ""},
			{0, "do", "XPENDING s g"},
			{0, "do", "XINFO GROUPS s"},
			{1, "do", "XREADGROUP GROUP g c1 BLOCK 20 STREAMS s >"},
		},
		"XREADGROUP ends when its group is destroyed, not when its consumer is": {
			{0, "do", "XGROUP CREATE s g $ MKSTREAM"},
			{1, "wait", "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"},
			{0, "do", "XGROUP DELCONSUMER s g c"},
			{0, "do", "XGROUP SETID s g 0"},
			{1, "quiet", ""},
			{0, "do", "XGROUP DESTROY s g"},
			{1, "recv", ""},
			{0, "do", "XGROUP CREATE s g $"},
			{1, "wait", "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"},
			{0, "do", "XADD s3 1-0 a b"},
			{0, "do", "RENAME s3 s"},
			{1, "recv", ""},
		},
		"XREADGROUP ends when its stream key goes": {
			{0, "do", "XGROUP CREATE s g $ MKSTREAM"},
			{1, "wait", "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"},
			{0, "do", "SET s x"},
			{1, "recv", ""},
			{0, "do", "DEL s"},
			{0, "do", "XGROUP CREATE s g $ MKSTREAM"},
			{1, "wait", "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"},
			{0, "do", "UNLINK s"},
			{1, "recv", ""},
			{0, "do", "XGROUP CREATE s g $ MKSTREAM"},
			{1, "wait", "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"},
			{0, "do", "RENAME s s2"},
			{1, "recv", ""},
			{0, "do", "XGROUP CREATE s g $ MKSTREAM"},
			{0, "do", "XGROUP CREATE t g $ MKSTREAM"},
			{1, "wait", "XREADGROUP GROUP g c BLOCK 0 STREAMS s t > >"},
			{0, "do", "DEL t"},
			{1, "recv", ""},
			{1, "wait", "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"},
			{0, "do", "SWAPDB 0 1"},
			{1, "recv", ""},
			{0, "do", "SWAPDB 0 1"},
			{1, "wait", "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"},
			{0, "do", "FLUSHALL"},
			{1, "recv", ""},
		},
		"a stream key replaced by another type": {
			{1, "wait", "XREAD BLOCK 0 STREAMS s $"},
			{0, "do", "SET s x"},
			{1, "quiet", ""},
			{0, "do", "DEL s"},
			{0, "do", "XADD s 9-0 f v"},
			{1, "recv", ""},
		},
	}
	for name, steps := range scripts {
		for _, proto := range []string{"2", "3"} {
			t.Run(name+"/resp"+proto, func(t *testing.T) {
				rc := make([]*bufio.Reader, 4)
				rw := make([]net.Conn, 4)
				rid := make([]string, 4)
				e := newTestEngine()
				hc := conns(t, e, 4)
				hid := make([]string, 4)
				pend := make([]<-chan string, 4)
				for i := range rc {
					c, err := net.Dial("tcp", addr)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { c.Close() })
					rw[i], rc[i] = c, bufio.NewReader(c)
					c.SetDeadline(time.Now().Add(30 * time.Second))
					redisDo(t, rw[i], rc[i], "HELLO", proto)
					rid[i] = strings.TrimSuffix(strings.TrimPrefix(redisDo(t, rw[i], rc[i], "CLIENT", "ID"), ":"), "\r\n")
					hc[i].do("HELLO", proto)
					hid[i] = strconv.FormatUint(hc[i].client.ID, 10)
				}
				redisDo(t, rw[0], rc[0], "FLUSHALL")
				args := func(cmd string, ids []string) []string {
					for i, id := range ids {
						cmd = strings.ReplaceAll(cmd, "{id:"+strconv.Itoa(i)+"}", id)
					}
					return strings.Fields(cmd)
				}
				for i, st := range steps {
					switch st.op {
					case "do":
						want := redisDo(t, rw[st.conn], rc[st.conn], args(st.cmd, rid)...)
						if got := hc[st.conn].do(args(st.cmd, hid)...); got != want {
							t.Fatalf("step %d %q: got %q, Redis %q", i, st.cmd, got, want)
						}
					case "wait":
						if _, err := rw[st.conn].Write(encodeCommand(args(st.cmd, rid))); err != nil {
							t.Fatal(err)
						}
						pend[st.conn] = blockedDo(t, hc[st.conn], args(st.cmd, hid)...)
						time.Sleep(30 * time.Millisecond) // Redis has it blocked by then
					case "recv":
						raw, err := resptest.ReadRaw(rc[st.conn])
						if err != nil {
							t.Fatal(err)
						}
						if got := recv(t, pend[st.conn]); got != string(raw) {
							t.Fatalf("step %d: blocked client %d got %q, Redis %q", i, st.conn, got, raw)
						}
					case "quiet":
						pending(t, pend[st.conn])
						rw[st.conn].SetReadDeadline(time.Now().Add(30 * time.Millisecond))
						if _, err := rc[st.conn].Peek(1); err == nil {
							t.Fatalf("step %d: Redis's client %d got a reply", i, st.conn)
						}
						rw[st.conn].SetDeadline(time.Now().Add(30 * time.Second))
					}
				}
			})
		}
	}
}

func redisDo(t *testing.T, w net.Conn, r *bufio.Reader, args ...string) string {
	t.Helper()
	if _, err := w.Write(encodeCommand(args)); err != nil {
		t.Fatal(err)
	}
	raw, err := resptest.ReadRaw(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// A stream that expires under a blocked XREADGROUP ends its wait at the next expiry sweep, with
// the reply redis-server 7.0.15 gives (recorded by hand: Redis's active expiry does the same).
func TestXReadGroupUnblockedByExpiry(t *testing.T) {
	e := newTestEngine()
	hc := conns(t, e, 2)
	hc[0].do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	pend := blockedDo(t, hc[1], "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
	time.Sleep(30 * time.Millisecond)
	hc[0].do("PEXPIRE", "s", "1")
	time.Sleep(5 * time.Millisecond)
	pending(t, pend)
	e.ActiveExpire(10 * time.Millisecond)
	if got := recv(t, pend); got != "-UNBLOCKED the stream key no longer exists\r\n" {
		t.Fatalf("after the sweep the blocked XREADGROUP got %q", got)
	}
}
