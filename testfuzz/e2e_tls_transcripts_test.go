package testfuzz

import (
	"bufio"
	"crypto/tls"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/net/transport/tlstest"
)

// The command layer's transcripts (src/command/testdata, recorded from redis-server 7.0.15) replay
// over TLS byte for byte as over plain TCP: each single-connection file runs on two fresh HotKV
// servers, one over its plain port and one over its TLS port, and every reply must be the same
// bytes. Steps whose reply depends on the connection itself (CLIENT LIST's addresses and ports,
// timings) are listed in tlsTranscriptSkip. Together with TestTLSRedisCLI and TestTLSGoRedis
// this is the "the pipeline cannot tell" check.
func TestTLSTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every transcript twice")
	}
	// The plain side runs on the std engine, whose code TLS connections share, so that a
	// difference is TLS's. (On the netpoll engine an inline blocking command with a quoted
	// argument, BLPOP k ' 1', fails with "unbalanced quotes": its inline line was unescaped in
	// place and parsed again when the blocking command moved off the poller.)
	t.Setenv("HOTKV_TRANSPORT", "std")
	files, _ := filepath.Glob(filepath.Join(packageDir, "../src/command/testdata/*.txt")) // packageDir: a server's dir directive moves the process
	certs := tlstest.New(t, "transcript CA")
	f := certs.Write(t, t.TempDir())
	var replayed, steps, unstable int
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(data), "## sync\n") || strings.Contains(string(data), "\n@") {
			continue // several connections or push messages
		}
		name := filepath.Base(file)
		resp3 := strings.HasSuffix(name, ".resp3.txt")
		if resp3 && raceEnabled {
			continue // -race: the RESP2 files only, four servers each is slow enough
		}
		cmds := transcriptCommands(string(data))
		run := func(useTLS bool) []string {
			ports := freePorts(t, 2)
			plainPort, port := ports[0], ports[1]
			_, s := startHotKV(t, "--port", strconv.Itoa(plainPort), "--tls-port", strconv.Itoa(port), "--tls-cert-file", f.Cert,
				"--tls-key-file", f.Key, "--tls-ca-cert-file", f.CA, "--tls-auth-clients", "no",
				"--enable-debug-command", "yes") // the transcripts wait out short TTLs with DEBUG SLEEP
			var c *rawConn
			if useTLS {
				tc, err := tls.Dial("tcp", s.TLSAddrs()[0].String(), certs.ClientConfig(t, false))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tc.Close() })
				c = &rawConn{t: t, addr: "tls", c: tc, r: bufio.NewReaderSize(tc, 64<<10)}
			} else {
				c = dial(t, s.Addrs()[0].String())
			}
			if resp3 {
				c.write([]byte("HELLO 3\r\n"))
				c.reply()
			}
			var out []string
			for _, cmd := range cmds {
				c.write([]byte(cmd + "\r\n"))
				c.c.SetReadDeadline(time.Now().Add(ioTimeout))
				r, err := resptest.ReadRaw(c.r)
				if err != nil {
					out = append(out, "closed: "+err.Error())
					break
				}
				out = append(out, string(r))
			}
			return out
		}
		// Each side runs twice: a step whose reply differs between two runs on the same side
		// depends on the clock (expiry, idle times, TIME) or on chance, and is left out.
		plain, plain2, overTLS, overTLS2 := run(false), run(false), run(true), run(true)
		replayed++
		at := func(r []string, i int) string {
			if i < len(r) {
				return r[i]
			}
			return ""
		}
		for i := range max(len(plain), len(overTLS)) {
			p, o := at(plain, i), at(overTLS, i)
			if p != at(plain2, i) || o != at(overTLS2, i) || tlsTranscriptVaries(cmds[i]) {
				unstable++
				continue
			}
			steps++
			if p != o {
				t.Errorf("%s: %q: plain %s, TLS %s", name, cmds[i], quote(p), quote(o))
			}
		}
	}
	t.Logf("%d transcripts: %d steps equal over TLS and plain, %d left out as unstable", replayed, steps, unstable)
	if replayed < 20 {
		t.Errorf("only %d transcripts found", replayed)
	}
}

// tlsTranscriptVaries reports a command whose reply names the connection's own address and
// port, a random pick or a time in milliseconds (which two runs of a side may agree on by chance).
func tlsTranscriptVaries(cmd string) bool {
	name, rest, _ := strings.Cut(strings.ToUpper(cmd), " ")
	switch name {
	case "HRANDFIELD", "SRANDMEMBER", "ZRANDMEMBER", "RANDOMKEY", "SPOP",
		"XPENDING", "XINFO", "XCLAIM", "XAUTOCLAIM", "TIME", "MEMORY", "OBJECT", "PTTL", "PEXPIRETIME",
		"TTL", "EXPIRETIME", // a far expiry's seconds may cross a second between the two servers
		"LASTSAVE", // the save's second, which may differ by one between the two servers
		"INFO", "LATENCY", "SLOWLOG":
		return true
	case "CLIENT":
		return strings.HasPrefix(rest, "INFO") || strings.HasPrefix(rest, "LIST")
	}
	return false
}

// transcriptCommands returns a transcript's command lines (inline syntax).
func transcriptCommands(data string) []string {
	var cmds []string
	for _, line := range strings.Split(data, "\n") {
		for _, m := range []string{"> ", ">* ", ">~ "} {
			if rest, ok := strings.CutPrefix(line, m); ok {
				cmds = append(cmds, rest)
				break
			}
		}
	}
	return cmds
}
