package aof

import (
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/pipeline/feed"
)

// syncCountFS counts the fsyncs of the files it opens.
type syncCountFS struct {
	OSFS
	syncs atomic.Int64
}

type countedFile struct {
	File
	n *atomic.Int64
}

func (f countedFile) Sync() error { f.n.Add(1); return f.File.Sync() }

func (c *syncCountFS) Create(name string) (File, error) {
	f, err := c.OSFS.Create(name)
	if err != nil {
		return nil, err
	}
	return countedFile{f, &c.syncs}, nil
}

func (c *syncCountFS) OpenAppend(name string) (File, error) {
	f, err := c.OSFS.OpenAppend(name)
	if err != nil {
		return nil, err
	}
	return countedFile{f, &c.syncs}, nil
}

// BenchmarkAlwaysWaiters: SET entries written under appendfsync always on this machine's disk
// (t.TempDir()), each by a goroutine that waits for its entry to be durable before the next, with
// 1, 8 and 64 such goroutines; reports entries/s, fsyncs/s and entries per fsync.
func BenchmarkAlwaysWaiters(b *testing.B) {
	for _, waiters := range []int{1, 8, 64} {
		b.Run("waiters="+strconv.Itoa(waiters), func(b *testing.B) {
			fsys := &syncCountFS{}
			f := feed.New(4, 4<<20)
			rd := f.Attach()
			defer rd.Close()
			w, err := Open(Config{FS: fsys, Dir: filepath.Join(b.TempDir(), "appendonlydir"),
				Filename: testFn, Fsync: Always}, rd)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			val := make([]byte, 64)
			var mu sync.Mutex
			var left atomic.Int64
			left.Store(int64(b.N))
			syncs0 := fsys.syncs.Load()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for g := 0; g < waiters; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; left.Add(-1) >= 0; i++ {
						mu.Lock()
						seq := f.Append(g%4, 0, enc("SET", "key:"+strconv.Itoa(g)+":"+strconv.Itoa(i), string(val)))
						mu.Unlock()
						w.Notify()
						if err := w.WaitDurable(seq, 30*time.Second); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(start).Seconds()
			syncs := fsys.syncs.Load() - syncs0
			b.ReportMetric(float64(b.N)/el, "entries/s")
			b.ReportMetric(float64(syncs)/el, "fsyncs/s")
			if syncs > 0 {
				b.ReportMetric(float64(b.N)/float64(syncs), "entries/fsync")
			}
		})
	}
}
