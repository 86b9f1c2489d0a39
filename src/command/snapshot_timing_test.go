package command

import (
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// benchSerializer writes what an RDB string record holds: key and value, length-prefixed.
type benchSerializer struct{}

func (benchSerializer) SelectDB(dst []byte, db int) []byte {
	return binary.AppendUvarint(append(dst, 0xfe), uint64(db))
}

func (benchSerializer) Entry(dst []byte, _ int, e *keyspace.Entry, _ *keyspace.Keyspace) []byte {
	dst = binary.AppendUvarint(append(dst, 0), uint64(len(e.Key())))
	dst = append(dst, e.Key()...)
	dst = binary.AppendUvarint(dst, uint64(len(e.Bytes())))
	return append(dst, e.Bytes()...)
}

// BenchmarkSnapshot1M: one snapshot of 1,000,000 keys of 256 bytes (32 shards, 16 databases, as
// a two-thread server) while two clients pipeline SETs of random existing keys (30 a batch).
// It reports the instant's pause (holding every token) and token wait, copy-on-write entries,
// the peak bytes queued for the consumer and held in all (queue plus the shards' buffers). fast: the
// consumer discards chunks at once; slow: it takes 1 ms per chunk (about 64 MB/s), so the
// queue reaches its bound and the walk waits.
func BenchmarkSnapshot1M(b *testing.B) {
	const keys = 1_000_000
	e := NewEngine(Options{Shards: 32, Databases: 16, Settings: DefaultSettings(), Config: testConfigStore()})
	val := strings.Repeat("v", 256)
	tc := newTestConn(b, e)
	for i := 0; i < keys; {
		var req []byte
		for j := 0; j < 1000 && i < keys; j, i = j+1, i+1 {
			req = append(req, encodeCommand([]string{"SET", "key:" + strconv.Itoa(i), val})...)
		}
		if err := tc.serveRaw(req); err != nil {
			b.Fatal(err)
		}
		tc.stream.out.Reset()
	}
	for _, mode := range []struct {
		name  string
		pause time.Duration
	}{{"fast", 0}, {"slow", time.Millisecond}} {
		b.Run(mode.name, func(b *testing.B) {
			for range b.N {
				runSnapshotUnderLoad(b, e, mode.pause)
			}
		})
	}
}

func runSnapshotUnderLoad(b *testing.B, e *Engine, consumerPause time.Duration) {
	var stop atomic.Bool
	var sets atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		tc := newTestConn(b, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			val := strings.Repeat("w", 256)
			for !stop.Load() {
				var req []byte
				for range 30 {
					req = append(req, encodeCommand([]string{"SET", "key:" + strconv.Itoa(rng.IntN(1_000_000)), val})...)
				}
				if err := tc.serveRaw(req); err != nil {
					b.Error(err)
					return
				}
				tc.stream.out.Reset()
				sets.Add(30)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // the load is running
	sets0 := sets.Load()
	b.ResetTimer()
	sn, err := e.StartSnapshot(func(int) Serializer { return benchSerializer{} })
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for {
		c, err := sn.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		total += int64(len(c))
		time.Sleep(consumerPause)
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	st := sn.Stats()
	b.ReportMetric(float64(st.Pause.Microseconds()), "pause-µs")
	b.ReportMetric(float64(st.LockWait.Microseconds()), "lockwait-µs")
	b.ReportMetric(float64(st.Copied), "cow-entries")
	b.ReportMetric(float64(st.Walked), "walked-entries")
	b.ReportMetric(float64(st.PeakQueued)/(1<<20), "peakqueued-MB")
	b.ReportMetric(float64(st.PeakBuffer)/(1<<20), "peakchunk-MB")
	b.ReportMetric(float64(st.PeakHeld)/(1<<20), "peakheld-MB")
	b.ReportMetric(float64(total)/(1<<20), "image-MB")
	b.ReportMetric(float64(st.Duration.Milliseconds()), "snapshot-ms")
	b.ReportMetric(float64(sets.Load()-sets0), "sets-during")
}
