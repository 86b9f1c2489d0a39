package testfuzz

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// MSET is atomic: readers issuing MGET of the same keys over other connections never see some keys
// from one MSET and some from another. The keys spread over many shards.
func TestMSetAtomicAgainstMGet(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		const writers, readers, keys = 3, 3, 24
		names := make([]string, keys)
		for i := range names {
			names[i] = "atomic:" + strconv.Itoa(i)
		}
		mget := appendCommand(nil, append([]string{"MGET"}, names...)...)
		duration := 2 * time.Second
		if testing.Short() {
			duration = 500 * time.Millisecond
		}
		stop := time.Now().Add(duration)
		var wg sync.WaitGroup
		errs := make(chan error, writers+readers)
		for w := range writers {
			c := dial(t, hotkv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seq := 0; time.Now().Before(stop); seq++ {
					v := fmt.Sprintf("w%d-%d", w, seq)
					args := []string{"MSET"}
					for _, k := range names {
						args = append(args, k, v)
					}
					if r, err := c.doErr(args...); err != nil || r != "+OK\r\n" {
						errs <- fmt.Errorf("writer %d: MSET = %q, %v", w, r, err)
						return
					}
				}
			}()
		}
		for r := range readers {
			c := dial(t, hotkv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; time.Now().Before(stop); n++ {
					if err := checkMGetUniform(c, mget, keys); err != nil {
						errs <- fmt.Errorf("reader %d read %d: %v", r, n, err)
						return
					}
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

// checkMGetUniform reads the MGET reply and checks every element is the same (or all are nil,
// before the first MSET).
func checkMGetUniform(c *rawConn, mget []byte, keys int) error {
	if err := c.tryWrite(mget); err != nil {
		return err
	}
	b, err := c.tryReply()
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\r\n"), "\r\n")
	if lines[0] != "*"+strconv.Itoa(keys) {
		return fmt.Errorf("MGET reply %s", quote(b))
	}
	first := elemAt(lines, 0)
	for i := 1; i < keys; i++ {
		if e := elemAt(lines, i); e != first {
			return fmt.Errorf("saw half an MSET: key 0 = %q, key %d = %q", first, i, e)
		}
	}
	return nil
}

// elemAt returns element i of a flat array of bulk strings split at CRLF (values here hold no CRLF).
func elemAt(lines []string, i int) string {
	pos := 1
	for ; i > 0; i-- {
		if lines[pos] == "$-1" {
			pos++
		} else {
			pos += 2
		}
	}
	if lines[pos] == "$-1" {
		return "<nil>"
	}
	return lines[pos+1]
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
