package testfuzz

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// 50 publishers and 50 subscribers on one channel over loopback: every subscriber gets every
// message of every publisher, each publisher's in the order it published them, and nothing else.
func TestPubSubFanOut(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		const pubs, subs = 50, 50
		perPub := 100
		if testing.Short() || raceEnabled {
			perPub = 30
		}
		subConns := make([]*rawConn, subs)
		for i := range subConns {
			subConns[i] = dial(t, hotkv)
			if r := subConns[i].do("SUBSCRIBE", "fan"); !strings.HasPrefix(r, "*3\r\n$9\r\nsubscribe") {
				t.Fatalf("SUBSCRIBE: %q", r)
			}
		}
		errs := make(chan error, pubs+subs)
		var wg sync.WaitGroup
		for i, c := range subConns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := make([]int, pubs)
				for range pubs * perPub {
					raw, err := c.tryReply()
					if err != nil {
						errs <- fmt.Errorf("subscriber %d: %v after %v messages", i, err, next)
						return
					}
					v, err := resptest.Parse(raw)
					msg, err2 := v.Strings()
					if err != nil || err2 != nil || len(msg) != 3 || msg[0] != "message" || msg[1] != "fan" {
						errs <- fmt.Errorf("subscriber %d: unexpected %q", i, raw)
						return
					}
					p, seq, ok := strings.Cut(msg[2], ":")
					pi, err3 := strconv.Atoi(p)
					si, err4 := strconv.Atoi(seq)
					if !ok || err3 != nil || err4 != nil || pi >= pubs || si != next[pi] {
						errs <- fmt.Errorf("subscriber %d: message %q out of order (next from it: %d)", i, msg[2], next[min(max(pi, 0), pubs-1)])
						return
					}
					next[pi]++
				}
			}()
		}
		for p := range pubs {
			c := dial(t, hotkv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seq := range perPub {
					r, err := c.doErr("PUBLISH", "fan", fmt.Sprintf("%d:%d", p, seq))
					if err != nil || r != ":"+strconv.Itoa(subs)+"\r\n" {
						errs <- fmt.Errorf("publisher %d: PUBLISH = %q, %v", p, r, err)
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

// A subscriber that never reads is cut off once its pending messages pass the pubsub output
// limit, with Redis's log line; the process's memory stays bounded by the limit times the slow
// subscribers, a reading subscriber gets every message, and other clients keep normal latency.
func TestSlowSubscriberCutOff(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		logfile := filepath.Join(t.TempDir(), "hotkv.log")
		const hard = 4 << 20
		hotkv, _ := startHotKV(t, "--client-output-buffer-limit", "pubsub "+strconv.Itoa(hard)+" 1mb 60",
			"--logfile", logfile, "--loglevel", "notice")
		const slow = 8
		slowConns := make([]net.Conn, slow)
		for i := range slowConns {
			c, err := net.Dial("tcp", hotkv)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			c.(*net.TCPConn).SetReadBuffer(4096) // and never read: the kernel queues fill fast
			c.Write(appendCommand(nil, "SUBSCRIBE", "flood"))
			slowConns[i] = c
		}
		reader := dial(t, hotkv)
		reader.do("SUBSCRIBE", "flood")
		ctl := dial(t, hotkv)
		waitFor(t, 10*time.Second, func() bool {
			return strings.Contains(ctl.do("PUBSUB", "NUMSUB", "flood"), ":"+strconv.Itoa(slow+1)+"\r\n")
		})
		before := rssBytes(t)
		msg := strings.Repeat("x", 32<<10)
		const total = 1024 // 32 MB per subscriber: 8 times the hard limit
		got := make(chan int, 1)
		go func() {
			n := 0
			for ; n < total; n++ {
				if _, err := reader.tryReply(); err != nil {
					break
				}
			}
			got <- n
		}()
		pub := dial(t, hotkv)
		var worst time.Duration
		peak := before
		for i := range total {
			pub.do("PUBLISH", "flood", msg)
			if i%64 == 0 {
				start := time.Now()
				if r := ctl.do("PING"); r != "+PONG\r\n" {
					t.Fatalf("PING: %q", r)
				}
				worst = max(worst, time.Since(start))
				peak = max(peak, rssBytes(t))
			}
		}
		if n := <-got; n != total {
			t.Errorf("the reading subscriber got %d of %d messages", n, total)
		}
		waitFor(t, 10*time.Second, func() bool {
			return strings.Contains(ctl.do("PUBSUB", "NUMSUB", "flood"), "$5\r\nflood\r\n:1\r\n")
		})
		// The test's own process holds the server, the clients and their garbage: 100 MB of room
		// (measured: 47-86 MB without the race detector), twice that under it, whose shadow
		// memory doubles what the flood makes the heap map the first time (150-168 MB measured
		// in the first run of a process, 47-92 MB after). Unbounded buffers would hold
		// slow*total*32 KB = 256 MB more than the limits, and twice that under -race.
		room := int64(100 << 20)
		if raceEnabled {
			room *= 2
		}
		if limit := int64(slow*hard) + room; peak-before > limit {
			t.Errorf("RSS grew by %d MB, more than %d MB", (peak-before)>>20, limit>>20)
		}
		if worst > time.Second {
			t.Errorf("PING took %v while the subscribers were flooded", worst)
		}
		logged, _ := os.ReadFile(logfile)
		if n := strings.Count(string(logged), "scheduled to be closed ASAP for overcoming of output buffer limits."); n != slow {
			t.Errorf("%d output-limit log lines, want %d:\n%s", n, slow, logged)
		}
		t.Logf("RSS +%d MB at most, slowest PING %v", (peak-before)>>20, worst)
	})
}

// rssBytes reads the process's resident set size.
func rssBytes(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("condition not met in time")
		}
	}
}
