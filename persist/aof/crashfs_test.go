package aof

import (
	"bytes"
	"math/rand"
	"strconv"
	"testing"
)

// CrashFS against a dumb reference: random writes, syncs, creates, renames, removes and
// directory syncs, then a crash; every file's bytes and every name must be what the model kept
// (the synced bytes of the files whose names a SyncDir made durable).
func TestCrashFSModel(t *testing.T) {
	type file struct{ data, synced []byte }
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := NewCrashFS()
		c.MkdirAll("/d")
		names := map[string]*file{}   // what the running system sees
		durable := map[string]*file{} // what a crash keeps
		handles := map[*file]File{}
		pick := func() string { return "/d/f" + strconv.Itoa(rng.Intn(4)) }
		for op := 0; op < 40; op++ {
			switch rng.Intn(6) {
			case 0: // create or open for append
				n := pick()
				fl := names[n]
				var h File
				var err error
				if fl == nil || rng.Intn(2) == 0 {
					h, err = c.Create(n)
					if fl == nil {
						fl = &file{}
						names[n] = fl
					}
					fl.data = nil
				} else {
					h, err = c.OpenAppend(n)
				}
				if err != nil {
					t.Fatal(err)
				}
				handles[fl] = h
			case 1: // write
				for fl, h := range handles {
					b := []byte(strconv.Itoa(rng.Intn(1000)))
					h.Write(b)
					fl.data = append(fl.data, b...)
					break
				}
			case 2: // sync
				for fl, h := range handles {
					h.Sync()
					fl.synced = bytes.Clone(fl.data)
					break
				}
			case 3: // rename
				a, b := pick(), pick()
				if fl := names[a]; fl != nil && a != b {
					c.Rename(a, b)
					delete(names, a)
					names[b] = fl
				}
			case 4: // remove
				n := pick()
				if names[n] != nil {
					c.Remove(n)
					delete(names, n)
				}
			case 5:
				c.SyncDir("/d")
				durable = map[string]*file{}
				for n, fl := range names {
					durable[n] = fl
				}
			}
		}
		c.Crash()
		got, _ := c.ReadDir("/d")
		if len(got) != len(durable) {
			t.Fatalf("seed %d: after the crash %q, model has %d names", seed, got, len(durable))
		}
		for n, fl := range durable {
			b, err := c.ReadFile(n)
			if err != nil || !bytes.Equal(b, fl.synced) {
				t.Fatalf("seed %d: %s holds %q, model %q (%v)", seed, n, b, fl.synced, err)
			}
		}
	}
}
