package cluster

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// refSlot is a bit-at-a-time CRC-16/XMODEM and a literal reading of the hash-tag rule, the dumb
// reference KeySlot is compared with.
func refSlot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % Slots)
}

func TestCRC16CheckValue(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x31c3 { // XMODEM's published check value
		t.Fatalf("CRC16(123456789) = %#x", got)
	}
}

func randKey(r *rand.Rand) string {
	const alpha = "ab{}c"
	b := make([]byte, r.IntN(12))
	for i := range b {
		if r.IntN(3) == 0 {
			b[i] = alpha[r.IntN(len(alpha))]
		} else {
			b[i] = byte(r.IntN(256))
		}
	}
	return string(b)
}

func TestKeySlotMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		k := randKey(r)
		if got, want := KeySlot([]byte(k)), refSlot(k); got != want {
			t.Fatalf("KeySlot(%q) = %d, want %d", k, got, want)
		}
	}
}

// TestKeySlotAgainstRedis asks redis-server's CLUSTER KEYSLOT for 2000 keys (tags, empty tags, nested
// braces, binary bytes) on the first free port of 27450-27469.
func TestKeySlotAgainstRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	dir := t.TempDir()
	// The bus port (+10000) lies in Linux's ephemeral range, where a client connection of another
	// test may hold it (CI once saw redis-server exit for that): take the first pair both free.
	port := 0
	for p := 27450; p < 27470 && port == 0; p++ {
		port = p
		for _, q := range []int{p, p + 10000} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", q))
			if err != nil {
				port = 0
				break
			}
			l.Close()
		}
	}
	if port == 0 {
		t.Skip("no free port pair in 27450-27469")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir,
		"--cluster-enabled", "yes", "--save", "", "--cluster-config-file", dir+"/nodes.conf")
	srv.Dir = dir
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	r := rand.New(rand.NewPCG(5, 6))
	keys := []string{"", "{", "}", "{}", "{}a", "a{}b{c}", "{{a}}", "foo{bar}{zap}", "{user1000}.following", "x{y"}
	for len(keys) < 2000 {
		keys = append(keys, randKey(r))
	}
	var in strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&in, "*3\r\n$7\r\nCLUSTER\r\n$7\r\nKEYSLOT\r\n$%d\r\n%s\r\n", len(k), k)
	}
	var conn net.Conn
	var err error
	for range 50 {
		if conn, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go conn.Write([]byte(in.String()))
	rd := bufio.NewReader(conn)
	i := 0
	for ; i < len(keys); i++ {
		line, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, ":") {
			t.Fatalf("redis reply %q %v", line, err)
		}
		want, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		if got := KeySlot([]byte(keys[i])); got != want {
			t.Fatalf("KeySlot(%q) = %d, Redis says %d", keys[i], got, want)
		}
	}
	if i != len(keys) {
		t.Fatalf("compared %d of %d keys", i, len(keys))
	}
}

func BenchmarkKeySlot(b *testing.B) {
	k := []byte("user:{1000}:profile")
	b.ReportAllocs()
	for b.Loop() {
		_ = KeySlot(k)
	}
}
