package rdb

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIdleAndFreq: redis-server 7.0.15 under an LRU policy writes IDLE records
// and under LFU writes FREQ records that the Decoder reads; files we write with
// Idle and Freq load into such servers with OBJECT IDLETIME and OBJECT FREQ.
func TestIdleAndFreq(t *testing.T) {
	for _, tc := range []struct {
		policy string
		write  func(e *Encoder)
		query  string
		want   int64
	}{
		{"allkeys-lru", func(e *Encoder) { e.Idle(5000) }, "IDLETIME", 5000},
		{"allkeys-lfu", func(e *Encoder) { e.Freq(77) }, "FREQ", 77},
	} {
		dir := t.TempDir()
		s := startRedis(t, dir, "--maxmemory-policy", tc.policy)
		c := s.client(t)
		c.must(t, "SET", "k", "v")
		c.must(t, "SAVE")
		file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		if err != nil {
			t.Fatal(err)
		}
		d := NewDecoderBytes(file)
		found := false
		for {
			rec, err := d.Next()
			if err != nil {
				break
			}
			if rec.Kind == RecKey {
				found = true
				if tc.policy == "allkeys-lru" && rec.Idle < 0 || tc.policy == "allkeys-lfu" && rec.Freq < 0 {
					t.Errorf("%s: redis's record has idle %d freq %d", tc.policy, rec.Idle, rec.Freq)
				}
			}
		}
		if !found {
			t.Fatalf("%s: no key decoded", tc.policy)
		}

		e := &Encoder{}
		e.Header(Version)
		e.SelectDB(0)
		tc.write(e)
		e.StringValue([]byte("ours"), []byte("v"))
		e.EOF(CRC64(0, append(e.Buf, OpEOF)))
		d2 := t.TempDir()
		if err := os.WriteFile(filepath.Join(d2, "ours.rdb"), e.Buf, 0o644); err != nil {
			t.Fatal(err)
		}
		b := startRedis(t, d2, "--maxmemory-policy", tc.policy, "--dbfilename", "ours.rdb")
		got := b.client(t).must(t, "OBJECT", tc.query, "ours").(int64)
		if got < tc.want || got > tc.want+5 {
			t.Errorf("%s: OBJECT %s = %d, want %d", tc.policy, tc.query, got, tc.want)
		}
	}
}
