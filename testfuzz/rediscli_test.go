package testfuzz

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redis-cli --pipe (mass insertion) streams a million SETs without waiting for replies, then
// checks the count of replies and errors it got back.
func TestRedisCLIPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("a million-command mass insertion is skipped in -short mode")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not on PATH: install redis-tools to run the mass-insertion test")
	}
	const n = 1000000
	input := filepath.Join(t.TempDir(), "mass.resp")
	writeMassInsert(t, input, n)
	hotkv, _ := startHotKV(t)
	host, port, _ := net.SplitHostPort(hotkv)

	f, err := os.Open(input)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(cli, "-h", host, "-p", port, "--pipe", "--pipe-timeout", "60")
	cmd.Stdin = f
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("redis-cli --pipe of %d SETs took %v", n, time.Since(start))
	if err != nil {
		t.Fatalf("redis-cli --pipe: %v\n%s", err, out)
	}
	want := "errors: 0, replies: " + strconv.Itoa(n)
	if !bytes.Contains(out, []byte(want)) {
		t.Errorf("redis-cli --pipe output lacks %q:\n%s", want, out)
	}
	if got := dial(t, hotkv).do("DBSIZE"); got != ":"+strconv.Itoa(n)+"\r\n" {
		t.Errorf("DBSIZE after mass insertion = %s, want %d", quote(got), n)
	}
	c := dial(t, hotkv)
	for _, i := range []int{0, 1, n / 2, n - 1} {
		k, v := massKV(i)
		if got := c.do("GET", k); got != "$"+strconv.Itoa(len(v))+"\r\n"+v+"\r\n" {
			t.Errorf("GET %s = %s, want %q", k, quote(got), v)
		}
	}
}

func massKV(i int) (string, string) {
	s := strconv.Itoa(i)
	return "mass:" + s, "value-" + strings.Repeat(s, 2)
}

// writeMassInsert writes n SET commands as RESP, the format redis-cli --pipe expects.
func writeMassInsert(t *testing.T, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var buf []byte
	for i := range n {
		k, v := massKV(i)
		buf = appendCommand(buf[:0], "SET", k, v)
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
