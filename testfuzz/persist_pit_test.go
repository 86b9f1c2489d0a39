package testfuzz

// Point in time: BGSAVEs taken while clients move value between pairs of keys (MULTI/EXEC and
// EVAL touching both) load with every pair's sum intact.

import (
	"bufio"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

const (
	pitPairs = 16   // pairs a:i, b:i; with 32 shards about 15 of the 16 span two shards
	pitTotal = 1000 // each pair's sum
	pitSaves = 4
)

// moveScript moves ARGV[1] from KEYS[1] to KEYS[2] in one script.
const moveScript = "redis.call('DECRBY', KEYS[1], ARGV[1]); return redis.call('INCRBY', KEYS[2], ARGV[1])"

// TestPersistPointInTime: three clients move random amounts between a:i and b:i with MULTI
// DECRBY INCRBY EXEC and one with EVAL, while 4 BGSAVEs are taken one after another, beside
// 40,000 filler keys that make each snapshot take a while; every file, loaded by redis-server
// (an independent reader) and by HotKV, has a+b = 1000 for every pair. The redis-server source
// proves the harness (fork is point in time).
func TestPersistPointInTime(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	t.Parallel()
	for _, kind := range persistKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			redisOnlyUnderRace(t, kind)
			dir := t.TempDir()
			src := startNode(t, kind, dir, "--rdbcompression", "no")
			c := dial(t, src.addr)
			fillKeys(t, c, 40_000, 500, "f")
			for i := range pitPairs {
				c.do("SET", "a:"+strconv.Itoa(i), strconv.Itoa(pitTotal))
				c.do("SET", "b:"+strconv.Itoa(i), "0")
			}
			var moves atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := pitMover(src.addr, w, w == 3, stop, &moves); err != nil {
						errs <- err
					}
				}()
			}
			saved := make([]string, 0, pitSaves)
			for i := range pitSaves {
				time.Sleep(100 * time.Millisecond)
				m0 := moves.Load()
				before := c.do("LASTSAVE")
				if got := c.do("BGSAVE"); got != "+Background saving started\r\n" {
					t.Fatalf("BGSAVE %d: %s", i, quote(got))
				}
				waitBgsave(t, c, before)
				t.Logf("%s BGSAVE %d: %d moves ran during it", kind, i, moves.Load()-m0)
				keep := filepath.Join(t.TempDir(), "dump.rdb")
				if err := copyFile(filepath.Join(dir, "dump.rdb"), keep); err != nil {
					t.Fatal(err)
				}
				saved = append(saved, keep)
			}
			close(stop)
			wg.Wait()
			select {
			case err := <-errs:
				t.Fatal(err)
			default:
			}
			if moves.Load() == 0 {
				t.Fatal("no move ran")
			}
			checkSum(t, "live "+kind, src.addr, 40_000)
			for i, f := range saved {
				for _, loader := range persistKinds {
					d := t.TempDir()
					if err := copyFile(f, filepath.Join(d, "dump.rdb")); err != nil {
						t.Fatal(err)
					}
					n := startNode(t, loader, d)
					checkSum(t, kind+" BGSAVE "+strconv.Itoa(i)+" loaded by "+loader, n.addr, 40_000)
					n.stop(t)
				}
			}
		})
	}
}

// pitMover moves amounts between a pair's keys until stop, with MULTI/EXEC or with EVAL,
// pipelining 8 moves at a time.
func pitMover(addr string, id int, script bool, stop <-chan struct{}, moves *atomic.Int64) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	r := bufio.NewReader(c)
	seq := id
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		var buf []byte
		replies := 0
		for range 8 {
			seq += 7
			p := strconv.Itoa(seq % pitPairs)
			from, to := "a:"+p, "b:"+p
			if seq%2 == 0 {
				from, to = to, from
			}
			amount := strconv.Itoa(1 + seq%5)
			if script {
				buf = appendCommand(buf, "EVAL", moveScript, "2", from, to, amount)
				replies++
			} else {
				buf = appendCommand(buf, "MULTI")
				buf = appendCommand(buf, "DECRBY", from, amount)
				buf = appendCommand(buf, "INCRBY", to, amount)
				buf = appendCommand(buf, "EXEC")
				replies += 4
			}
		}
		c.SetDeadline(time.Now().Add(ioTimeout))
		if _, err := c.Write(buf); err != nil {
			return err
		}
		for range replies {
			v, err := resptest.Read(r)
			if err != nil {
				return err
			}
			if v.Kind == '-' {
				return &replyError{v.Str}
			}
		}
		moves.Add(8)
	}
}

type replyError struct{ s string }

func (e *replyError) Error() string { return "error reply: " + e.s }

// checkSum checks every pair's sum on the server at addr, and that it holds the pairs and
// filler keys.
func checkSum(t *testing.T, what, addr string, filler int) {
	t.Helper()
	c := dial(t, addr)
	for i := range pitPairs {
		p := strconv.Itoa(i)
		v := parseReply(t, c.do("MGET", "a:"+p, "b:"+p))
		a, err1 := strconv.Atoi(v.Elems[0].Str)
		b, err2 := strconv.Atoi(v.Elems[1].Str)
		if err1 != nil || err2 != nil || a+b != pitTotal {
			t.Errorf("%s: pair %d is a=%s b=%s, sum not %d", what, i, v.Elems[0], v.Elems[1], pitTotal)
		}
	}
	if n := c.do("DBSIZE"); n != ":"+strconv.Itoa(filler+2*pitPairs)+"\r\n" {
		t.Errorf("%s: DBSIZE %s, want %d", what, quote(n), filler+2*pitPairs)
	}
}

// TestPersistRewritePointInTime: the same movers run while three BGREWRITEAOFs are taken one
// after another (appendonly yes, appendfsync everysec, preamble yes and no); once they stop, the
// server is shut down and restarted from its AOF, and every pair holds exactly the values it
// held live: a move written both in the new base and in the incremental file, or in neither,
// would show (its sum would not, so the values are compared).
func TestPersistRewritePointInTime(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	t.Parallel()
	for _, kind := range persistKinds {
		for _, preamble := range []string{"yes", "no"} {
			t.Run(kind+"/preamble_"+preamble, func(t *testing.T) {
				t.Parallel()
				redisOnlyUnderRace(t, kind)
				dir := t.TempDir()
				args := []string{"--appendonly", "yes", "--appendfsync", "everysec", "--aof-use-rdb-preamble", preamble,
					"--rdbcompression", "no"}
				src := startNode(t, kind, dir, args...)
				c := dial(t, src.addr)
				fillKeys(t, c, 20_000, 500, "f")
				for i := range pitPairs {
					c.do("SET", "a:"+strconv.Itoa(i), strconv.Itoa(pitTotal))
					c.do("SET", "b:"+strconv.Itoa(i), "0")
				}
				var moves atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				errs := make(chan error, 4)
				for w := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := pitMover(src.addr, w, w == 3, stop, &moves); err != nil {
							errs <- err
						}
					}()
				}
				for i := range 3 {
					time.Sleep(100 * time.Millisecond)
					m0 := moves.Load()
					if got := c.do("BGREWRITEAOF"); !strings.HasPrefix(got, "+Background append only file rewriting") {
						t.Fatalf("BGREWRITEAOF %d: %s", i, quote(got))
					}
					waitRewrite(t, c)
					t.Logf("%s BGREWRITEAOF %d (preamble %s): %d moves ran during it", kind, i, preamble, moves.Load()-m0)
				}
				close(stop)
				wg.Wait()
				select {
				case err := <-errs:
					t.Fatal(err)
				default:
				}
				live := pairValues(t, src.addr)
				checkSum(t, "live "+kind, src.addr, 20_000)
				src.shutdown(t, "NOSAVE")
				n := startNode(t, kind, dir, args...)
				if got := pairValues(t, n.addr); got != live {
					t.Errorf("%s restarted from its AOF after %d moves and 3 rewrites:\n  got  %s\n  want %s", kind, moves.Load(), got, live)
				}
				checkSum(t, kind+" restarted from its AOF", n.addr, 20_000)
			})
		}
	}
}

// pairValues renders every pair's values.
func pairValues(t *testing.T, addr string) string {
	c := dial(t, addr)
	var b strings.Builder
	for i := range pitPairs {
		p := strconv.Itoa(i)
		v := parseReply(t, c.do("MGET", "a:"+p, "b:"+p))
		b.WriteString(p + "=" + v.Elems[0].Str + "/" + v.Elems[1].Str + " ")
	}
	return b.String()
}
