package command

import (
	"strconv"
	"testing"
)

// fillTagged writes n keys tagged tag through one connection, pipelined.
func fillTagged(b *testing.B, tc *testConn, n int, tag string) {
	b.Helper()
	var req []byte
	for i := range n {
		k := "key:" + strconv.Itoa(i)
		req = append(req, encodeCommand([]string{"SET", k, "v"})...)
		req = append(req, encodeCommand([]string{"TAG.SET", k, tag})...)
		if len(req) > 1<<20 || i == n-1 {
			if _, err := tc.send(req); err != nil {
				b.Fatal(err)
			}
			req = req[:0]
		}
	}
}

// TAG.SET of one new tag on an existing key, then TAG.DEL of it (so the index stays small):
// the cost per tagging, for ns/op and allocs.
func BenchmarkTagSet(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	tc.do("SET", "k", "v")
	set := encodeCommand([]string{"TAG.SET", "k", "t"})
	del := encodeCommand([]string{"TAG.DEL", "k", "t"})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tc.serveRaw(set)
		tc.serveRaw(del)
		tc.stream.out.Reset()
	}
}

// TAG.SET of a fresh key each time (a new id and bitmap entry): keys pre-created.
func BenchmarkTagSetNewKey(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	reqs := make([][]byte, b.N)
	var pre []byte
	for i := range b.N {
		k := "key:" + strconv.Itoa(i)
		pre = append(pre, encodeCommand([]string{"SET", k, "v"})...)
		reqs[i] = encodeCommand([]string{"TAG.SET", k, "t"})
		if len(pre) > 1<<20 {
			tc.send(pre)
			pre = pre[:0]
		}
	}
	tc.send(pre)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		tc.serveRaw(reqs[i])
		tc.stream.out.Reset()
	}
}

// TAG.MEMBERS of a tag on 1,000,000 keys.
func BenchmarkTagMembers1M(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	fillTagged(b, tc, 1_000_000, "big")
	req := encodeCommand([]string{"TAG.MEMBERS", "big"})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tc.serveRaw(req)
		tc.stream.out.Reset()
	}
}

// TAG.INVALIDATE of 100,000 keys (refilled outside the timer).
func BenchmarkTagInvalidate100k(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	req := encodeCommand([]string{"TAG.INVALIDATE", "big"})
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		fillTagged(b, tc, 100_000, "big")
		tc.stream.out.Reset()
		b.StartTimer()
		tc.serveRaw(req)
	}
	b.StopTimer()
	if got := tc.stream.out.String(); got != ":100000\r\n" {
		b.Fatalf("TAG.INVALIDATE = %q", got)
	}
}

// The same harness's cost for a plain write pair (SET then GET of one key), to read the TAG.SET
// figures against.
func BenchmarkTagBaselineSetGet(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	set := encodeCommand([]string{"SET", "k", "v"})
	get := encodeCommand([]string{"GET", "k"})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tc.serveRaw(set)
		tc.serveRaw(get)
		tc.stream.out.Reset()
	}
}
