package testfuzz

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Transfers over TCP: writers move amounts between 16 accounts (keys spread over the server's
// shards: with 16 or more shards per thread, 16 random keys fall on several) by pipelining MULTI,
// DECRBY, INCRBY, EXEC in one write; readers read every account in one MULTI … EXEC and check
// the total. 25,000 transfers a transport engine (5,000 under -race or -short): one round trip
// each, so that the test stays within seconds; the in-process TestMultiTransfers (src/command)
// runs 100,000.
func TestMultiTransfersE2E(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		const accounts, start, writers, readers = 16, 1000, 4, 2
		transfers := 25_000
		if raceEnabled || testing.Short() {
			transfers = 5_000
		}
		names := make([]string, accounts)
		setup := dial(t, hotkv)
		for i := range names {
			names[i] = "acct:" + strconv.Itoa(i)
			setup.do("SET", names[i], strconv.Itoa(start))
		}
		read := appendCommand(nil, "MULTI")
		for _, k := range names {
			read = appendCommand(read, "GET", k)
		}
		read = appendCommand(read, "EXEC")
		var stop, failed atomic.Bool
		var reads atomic.Int64
		errs := make(chan error, writers+readers)
		fail := func(err error) { failed.Store(true); errs <- err }
		deadline := time.Now().Add(2 * time.Minute)
		var wg, rg sync.WaitGroup
		for w := range writers {
			c := dial(t, hotkv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range transfers / writers {
					if failed.Load() || time.Now().After(deadline) {
						return
					}
					from, to := names[(i*5+w)%accounts], names[(i*3+w+1)%accounts]
					if from == to {
						to = names[(i*5+w+1)%accounts]
					}
					amount := strconv.Itoa(1 + i%9)
					req := appendCommand(nil, "MULTI")
					req = appendCommand(req, "DECRBY", from, amount)
					req = appendCommand(req, "INCRBY", to, amount)
					req = appendCommand(req, "EXEC")
					if err := c.tryWrite(req); err != nil {
						fail(err)
						return
					}
					for j := range 4 {
						r, err := c.tryReply()
						if err != nil {
							fail(err)
							return
						}
						if j == 3 && !strings.HasPrefix(string(r), "*2\r\n:") {
							fail(fmt.Errorf("EXEC of a transfer replied %q", r))
							return
						}
					}
				}
			}()
		}
		for range readers {
			c := dial(t, hotkv)
			rg.Add(1)
			go func() {
				defer rg.Done()
				for !stop.Load() && !failed.Load() {
					if err := c.tryWrite(read); err != nil {
						fail(err)
						return
					}
					var last []byte
					for range accounts + 2 {
						r, err := c.tryReply()
						if err != nil {
							fail(err)
							return
						}
						last = r
					}
					total := 0
					for _, line := range strings.Split(string(last), "\r\n") {
						if n, err := strconv.Atoi(line); err == nil && !strings.HasPrefix(line, "$") {
							total += n
						}
					}
					if total != accounts*start {
						fail(fmt.Errorf("total %d, want %d: %q", total, accounts*start, last))
						return
					}
					reads.Add(1)
				}
			}()
		}
		wg.Wait()
		stop.Store(true)
		rg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("transfers did not finish in time")
		}
		t.Logf("%d transfers, %d consistent reads", transfers, reads.Load())
	})
}

// 50 clients over TCP increment one counter by WATCH, GET, MULTI, SET, EXEC, retrying when EXEC
// replies a null array: the final value is the number of successful EXECs, all of them.
func TestWatchIncrementsE2E(t *testing.T) {
	hotkv, _ := startHotKV(t)
	const clients, each = 50, 20
	var ok, retries atomic.Int64
	errs := make(chan error, clients)
	deadline := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	for range clients {
		c := dial(t, hotkv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				if time.Now().After(deadline) {
					errs <- fmt.Errorf("out of time after %d increments", done)
					return
				}
				if _, err := tryDo(c, "WATCH", "counter"); err != nil {
					errs <- err
					return
				}
				v, err := tryDo(c, "GET", "counter")
				if err != nil {
					errs <- err
					return
				}
				n := 0
				if v != "$-1\r\n" {
					n, _ = strconv.Atoi(strings.Split(v, "\r\n")[1])
				}
				req := appendCommand(nil, "MULTI")
				req = appendCommand(req, "SET", "counter", strconv.Itoa(n+1))
				req = appendCommand(req, "EXEC")
				if err := c.tryWrite(req); err != nil {
					errs <- err
					return
				}
				var r []byte
				for range 3 {
					var err error
					if r, err = c.tryReply(); err != nil {
						errs <- err
						return
					}
				}
				switch string(r) {
				case "*1\r\n+OK\r\n":
					ok.Add(1)
					done++
				case "*-1\r\n":
					retries.Add(1)
				default:
					errs <- fmt.Errorf("EXEC replied %q", r)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := dial(t, hotkv).do("GET", "counter")
	if want := fmt.Sprintf("$%d\r\n%d\r\n", len(strconv.Itoa(clients*each)), clients*each); got != want || ok.Load() != clients*each {
		t.Fatalf("counter %q after %d successful EXECs (%d retries)", got, ok.Load(), retries.Load())
	}
	t.Logf("%d increments, %d retries", ok.Load(), retries.Load())
}

// tryDo is rawConn.do for goroutines other than the test's: it returns the error.
func tryDo(c *rawConn, args ...string) (string, error) {
	if err := c.tryWrite(appendCommand(nil, args...)); err != nil {
		return "", err
	}
	r, err := c.tryReply()
	return string(r), err
}

// Clients blocked on keys a transaction fills are served after EXEC, as in Redis: the same
// blocked command and transaction run on HotKV and redis-server, and the blocked client's reply,
// EXEC's and the keys' contents afterwards must be equal.
func TestMultiServesBlocked(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	redis := startRedis(t)
	hotkv, _ := startHotKV(t)
	cases := []struct {
		block []string
		tx    [][]string
		after [][]string
	}{
		{[]string{"BLPOP", "bl", "5"}, [][]string{{"RPUSH", "bl", "x", "y"}, {"LPUSH", "bl", "z"}}, [][]string{{"LRANGE", "bl", "0", "-1"}}},
		{[]string{"BZPOPMIN", "bz", "5"}, [][]string{{"ZADD", "bz", "2", "b", "1", "a"}, {"ZADD", "bz", "0", "c"}}, [][]string{{"ZRANGE", "bz", "0", "-1"}}},
		{[]string{"BLMOVE", "src", "dst", "RIGHT", "LEFT", "5"}, [][]string{{"RPUSH", "src", "a", "b"}, {"DEL", "dst"}},
			[][]string{{"LRANGE", "src", "0", "-1"}, {"LRANGE", "dst", "0", "-1"}}},
		{[]string{"BLPOP", "gone", "5"}, [][]string{{"RPUSH", "gone", "x"}, {"DEL", "gone"}, {"RPUSH", "gone", "y", "z"}},
			[][]string{{"LRANGE", "gone", "0", "-1"}}},
	}
	for _, c := range cases {
		var got [2]string
		for i, addr := range []string{hotkv, redis} {
			a, b := dial(t, addr), dial(t, addr)
			a.write(appendCommand(nil, c.block...))
			time.Sleep(100 * time.Millisecond) // a blocks
			out := b.do("MULTI")
			for _, cmd := range c.tx {
				out += b.do(cmd...)
			}
			out += b.do("EXEC") + "| blocked: " + string(a.reply()) + "| after: "
			for _, cmd := range c.after {
				out += b.do(cmd...)
			}
			got[i] = out
		}
		if got[0] != got[1] {
			t.Errorf("%q then MULTI %q EXEC:\nHotKV %q\nRedis %q", c.block, c.tx, got[0], got[1])
		}
	}
}
