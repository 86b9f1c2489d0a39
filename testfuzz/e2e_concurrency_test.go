package testfuzz

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// MSET is atomic: readers issuing MGET of the same keys over other connections never see some keys
// from one MSET and some from another. The keys spread over many shards. The test also fails when
// a reader saw fewer than minDistinct different MSETs: then the writers did not race it, and a
// torn read could not have shown. It runs at least minRun and stops once every reader has seen
// enough, or at maxRun.
func TestMSetAtomicAgainstMGet(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		const writers, readers, keys, minDistinct = 3, 3, 24, 20
		minRun, maxRun := 2*time.Second, 30*time.Second
		if testing.Short() {
			minRun = 500 * time.Millisecond
		}
		names := make([]string, keys)
		for i := range names {
			names[i] = "atomic:" + strconv.Itoa(i)
		}
		mget := appendCommand(nil, append([]string{"MGET"}, names...)...)
		var stop, failed atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, writers+readers)
		fail := func(err error) { failed.Store(true); errs <- err }
		for w := range writers {
			c := dial(t, hotkv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seq := 0; !stop.Load(); seq++ {
					v := fmt.Sprintf("w%d-%d", w, seq)
					args := []string{"MSET"}
					for _, k := range names {
						args = append(args, k, v)
					}
					if r, err := c.doErr(args...); err != nil || r != "+OK\r\n" {
						fail(fmt.Errorf("writer %d: MSET = %q, %v", w, r, err))
						return
					}
				}
			}()
		}
		distinct := make([]atomic.Int64, readers)
		for r := range readers {
			c := dial(t, hotkv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				seen := map[string]bool{}
				for n := 0; !stop.Load(); n++ {
					v, err := mgetUniform(c, mget, keys)
					if err != nil {
						fail(fmt.Errorf("reader %d read %d: %v", r, n, err))
						return
					}
					if v != "" && !seen[v] {
						seen[v] = true
						distinct[r].Store(int64(len(seen)))
					}
				}
			}()
		}
		start := time.Now()
		for !failed.Load() && time.Since(start) < maxRun {
			enough := time.Since(start) >= minRun
			for r := range distinct {
				enough = enough && distinct[r].Load() >= minDistinct
			}
			if enough {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		stop.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		seen := make([]int64, readers)
		for r := range distinct {
			seen[r] = distinct[r].Load()
		}
		t.Logf("in %v the readers saw %v different MSETs", time.Since(start).Round(time.Millisecond), seen)
		for r := range distinct {
			if n := distinct[r].Load(); n < minDistinct && !failed.Load() {
				t.Errorf("reader %d saw %d different MSETs in %v, want at least %d: the writers did not race the readers",
					r, n, time.Since(start).Round(time.Millisecond), minDistinct)
			}
		}
	})
}

// mgetUniform sends MGET and checks that every element of the reply is the same value (or all
// are nil, before the first MSET); it returns that value, "" for nil.
func mgetUniform(c *rawConn, mget []byte, keys int) (string, error) {
	if err := c.tryWrite(mget); err != nil {
		return "", err
	}
	b, err := c.tryReply()
	if err != nil {
		return "", err
	}
	v, err := resptest.Parse(b)
	if err != nil || v.Kind != '*' || len(v.Elems) != keys {
		return "", fmt.Errorf("MGET reply %s (%v)", quote(b), err)
	}
	first := v.Elems[0]
	for i, e := range v.Elems {
		if e.Kind != '$' || e.Null != first.Null || e.Str != first.Str {
			return "", fmt.Errorf("saw half an MSET: key 0 = %s, key %d = %s", first, i, e)
		}
	}
	return first.Str, nil
}

// Deep pipelines over many connections at once: every reply comes back in request order although
// the commands of one pipeline run on many shards.
func TestPipelineOrderAcrossShards(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		const conns, depth, keys = 8, 5000, 64
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for ci := range conns {
			c := dial(t, hotkv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := orderedPipeline(c, ci, depth, keys); err != nil {
					errs <- fmt.Errorf("connection %d: %v", ci, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// orderedPipeline sends depth commands over the connection's own keys and checks every reply
// against a local model of those keys.
func orderedPipeline(c *rawConn, conn, depth, keys int) error {
	counts := make([]int, keys)
	var req []byte
	want := make([]string, 0, depth)
	for i := range depth {
		j := (i * 7) % keys
		k := fmt.Sprintf("order:%d:%d", conn, j)
		switch i % 3 {
		case 0:
			counts[j]++
			req = appendCommand(req, "INCR", k)
			want = append(want, ":"+strconv.Itoa(counts[j])+"\r\n")
		case 1:
			v := strconv.Itoa(counts[j])
			req = appendCommand(req, "GET", k)
			if counts[j] == 0 {
				want = append(want, "$-1\r\n")
			} else {
				want = append(want, "$"+strconv.Itoa(len(v))+"\r\n"+v+"\r\n")
			}
		case 2:
			v := strconv.Itoa(i)
			req = appendCommand(req, "ECHO", v)
			want = append(want, "$"+strconv.Itoa(len(v))+"\r\n"+v+"\r\n")
		}
	}
	go c.tryWrite(req)
	for i, w := range want {
		got, err := c.tryReply()
		if err != nil {
			return fmt.Errorf("reply %d: %v", i, err)
		}
		if string(got) != w {
			return fmt.Errorf("reply %d = %s, want %s", i, quote(got), quote(w))
		}
	}
	return nil
}
