package feed

import (
	"fmt"
	"testing"
)

// BenchmarkReaderNext is the replication pump's side of the feed: k entries (a SET's RESP, 64-byte
// value) spread over 32 rings as the shards append them, then one Next that merges them.
func BenchmarkReaderNext(b *testing.B) {
	cmd := []byte("*3\r\n$3\r\nSET\r\n$16\r\nkey:000000012345\r\n$64\r\n" + string(make([]byte, 64)) + "\r\n")
	for _, k := range []int{16, 256, 4096} {
		b.Run(fmt.Sprintf("entries=%d", k), func(b *testing.B) {
			f := New(32, 1<<20)
			rd := f.Attach()
			for i := range f.rings { // fault the rings in outside the timing
				clear(f.rings[i].buf)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.SetBytes(int64(k * len(cmd)))
			for range b.N {
				for j := range k {
					f.Append((j*7)%32, 0, cmd)
				}
				got, err := rd.Next()
				if err != nil || len(got) != k {
					b.Fatalf("Next: %d entries, %v", len(got), err)
				}
			}
		})
	}
}

// BenchmarkAppend is one shard's append of a SET's RESP.
func BenchmarkAppend(b *testing.B) {
	cmd := []byte("*3\r\n$3\r\nSET\r\n$16\r\nkey:000000012345\r\n$64\r\n" + string(make([]byte, 64)) + "\r\n")
	f := New(32, 1<<20)
	rd := f.Attach()
	clear(f.rings[0].buf)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		f.Append(0, 0, cmd)
		if i%4096 == 4095 {
			rd.Next()
		}
	}
}
