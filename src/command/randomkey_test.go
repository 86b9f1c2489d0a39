package command

import (
	"bufio"
	"bytes"
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// RANDOMKEY reaches every key: 15,000 keys, 20 calls a key, and at most 1% never returned (a
// uniform pick misses about e^-20 of them: none). With the engine's old xorshift, whose next
// number's lowest bit follows from bits 0 and 7 of the one before, Keyspace.Sample's bucket and
// chain picks were tied, and 22% of the keys were never returned.
func TestRandomKeyReachesEveryKey(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	tc := newTestConn(t, e)
	const n = 15_000
	var b []byte
	for i := range n {
		b = appendCommand(b, [][]byte{[]byte("SET"), []byte("k:" + strconv.Itoa(i)), []byte("v")})
	}
	if _, err := tc.send(b); err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]bool, n)
	batch := appendCommand(nil, [][]byte{[]byte("RANDOMKEY")})
	batch = bytes.Repeat(batch, 1000)
	for range 20 * n / 1000 {
		out, err := tc.send(batch)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(bytes.NewReader(out))
		for range 1000 {
			v, err := resptest.Read(r)
			if err != nil {
				t.Fatalf("reading RANDOMKEY replies: %v", err)
			}
			s, err := v.Text()
			if err != nil {
				t.Fatalf("RANDOMKEY: %v", err)
			}
			seen[s] = true
		}
	}
	if missed := n - len(seen); missed > n/100 {
		t.Fatalf("%d of %d keys never returned by %d RANDOMKEYs", missed, n, 20*n)
	}
}
