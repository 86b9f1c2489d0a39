package testfuzz

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

var scriptOps = flag.Int("script.ops", 4000, "scripting differential: commands per protocol run")

// scriptLib is the differential's script library: reads and writes of declared keys, keys
// given in ARGV (undeclared: HotKV's runs add their shards as they go, or rerun under every
// shard), every-shard commands, errors raised and caught, and the reply conversions.
var scriptLib = []struct {
	body       string
	keys, argv int  // KEYS and ARGV given: keys, then args (undeclared keys when keyArgs)
	keyArgs    bool // ARGV holds keys
	ro         bool // also run as EVAL_RO
}{
	{body: `return redis.call('INCR', KEYS[1])`, keys: 1},
	{body: `local v = redis.call('GET', KEYS[1]); redis.call('SET', KEYS[2], v or 'none'); return v`, keys: 2},
	{body: `return redis.pcall('LPUSH', KEYS[1], ARGV[1])`, keys: 1, argv: 1},
	{body: `local t = {} for i, k in ipairs(KEYS) do t[i] = redis.call('EXISTS', k) end return t`, keys: 3, ro: true},
	{body: `redis.call('SET', ARGV[1], ARGV[2]); return redis.call('GET', ARGV[1])`, argv: 2, keyArgs: true},
	{body: `local a = redis.call('GET', ARGV[1]); local b = redis.call('GET', ARGV[2]); redis.call('SET', ARGV[1], b or 'x'); redis.call('SET', ARGV[2], a or 'y'); return {a, b}`, argv: 2, keyArgs: true},
	{body: `return redis.call('MGET', unpack(KEYS))`, keys: 3, ro: true},
	{body: `redis.call('DEL', KEYS[1]); return redis.call('RPUSH', KEYS[1], ARGV[1], ARGV[2])`, keys: 1, argv: 2},
	{body: `return {redis.call('TYPE', KEYS[1])['ok'], redis.pcall('STRLEN', KEYS[1])}`, keys: 1, ro: true},
	{body: `return redis.call('HSET', KEYS[1], 'f')`, keys: 1},
	{body: `return redis.call('DBSIZE')`, ro: true},
	{body: `local n = 0 for _, k in ipairs(KEYS) do if redis.call('EXISTS', k) == 1 then n = n + 1 end end redis.call('SET', KEYS[1], n) return n`, keys: 2},
	{body: `return redis.call('SADD', KEYS[1], ARGV[1]) + redis.call('SCARD', KEYS[1])`, keys: 1, argv: 1},
	{body: `local ok, e = pcall(redis.call, 'INCR', KEYS[1]); if ok then return e end return 'caught: ' .. tostring(e['err'])`, keys: 1},
	{body: `return redis.call('ZADD', KEYS[1], ARGV[1], 'm') .. ':' .. redis.call('ZSCORE', KEYS[1], 'm')`, keys: 1, argv: 1},
	{body: `return redis.error_reply('MY custom')`, ro: true},
	{body: `return {1, 'two', {3, false, true}, nil, 5}`, ro: true},
}

// fnLib is the library FCALL and FCALL_RO call in the differential: a read-only function, a
// write, keys taken from the arguments (undeclared), and an error.
const fnLib = `#!lua name=difflib
redis.register_function{function_name='fget', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}
redis.register_function('fincr', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)
redis.register_function('fswap', function(keys, args)
  local a = redis.call('GET', args[1]); local b = redis.call('GET', args[2])
  redis.call('SET', args[1], b or 'x'); redis.call('SET', args[2], a or 'y'); return {a, b}
end)
redis.register_function('ferr', function(keys) return redis.call('LPUSH', keys[1]) end)`

// fnCalls are the functions of fnLib: name, keys, args (keyArgs: the args are keys), whether
// FCALL_RO may call it.
var fnCalls = []struct {
	name       string
	keys, argv int
	keyArgs    bool
	ro         bool
}{{"fget", 1, 0, false, true}, {"fincr", 1, 1, false, false}, {"fswap", 0, 2, true, false},
	{"ferr", 1, 0, false, false}, {"nosuch", 0, 0, false, false}}

// scriptGen mixes EVAL, EVALSHA and EVAL_RO of scriptLib, and FCALL and FCALL_RO of fnLib, into
// the generator's stream.
type scriptGen struct {
	*gen
	shas []string
}

func (s *scriptGen) next() genCmd {
	if !s.chance(0.35) {
		return s.gen.next()
	}
	if s.chance(0.2) {
		return s.fcall()
	}
	i := s.r.IntN(len(scriptLib))
	sc := scriptLib[i]
	var keys, argv []string
	for range sc.keys {
		keys = append(keys, s.key())
	}
	for range sc.argv {
		if sc.keyArgs {
			argv = append(argv, s.key())
		} else {
			argv = append(argv, s.value())
		}
	}
	name, first := "EVAL", sc.body
	switch p := s.r.Float64(); {
	case p < 0.4:
		name, first = "EVALSHA", s.shas[i]
	case p < 0.5 && sc.ro:
		name = "EVAL_RO"
	case p < 0.52:
		name, first = "EVALSHA", strings.Repeat("f", 40) // NOSCRIPT
	}
	args := append([]string{name, first, fmt.Sprint(len(keys))}, keys...)
	return exact(append(args, argv...)...)
}

func (s *scriptGen) fcall() genCmd {
	f := fnCalls[s.r.IntN(len(fnCalls))]
	name := "FCALL"
	if f.ro && s.chance(0.5) || s.chance(0.05) {
		name = "FCALL_RO" // a function without no-writes fails under FCALL_RO
	}
	args := []string{name, f.name, fmt.Sprint(f.keys)}
	for range f.keys {
		args = append(args, s.key())
	}
	for range f.argv {
		if f.keyArgs {
			args = append(args, s.key())
		} else {
			args = append(args, s.value())
		}
	}
	return exact(args...)
}

// TestDifferentialScripting runs the generator's stream (every family) with scripts mixed in
// from two connections that take turns, a pipelined batch of 1..20 each, against HotKV and
// redis-server, and compares every reply (scripts' exactly) and, after each round, DBSIZE and
// every string key.
func TestDifferentialScripting(t *testing.T) {
	forEachDiffServers(t, func(t *testing.T, seed uint64, proto int, redis, hotkv string) {
		now := time.Now().Unix()
		var conns [2]struct {
			h, r *rawConn
			g    *scriptGen
		}
		var shas []string
		for _, sc := range scriptLib {
			sum := sha1.Sum([]byte(sc.body))
			shas = append(shas, hex.EncodeToString(sum[:]))
		}
		for i := range conns {
			conns[i].h, conns[i].r = dial(t, hotkv), dial(t, redis)
			conns[i].g = &scriptGen{gen: newGen(seed+uint64(i)*7919, 0, now), shas: shas}
			if proto == 3 {
				conns[i].h.do("HELLO", "3")
				conns[i].r.do("HELLO", "3")
			}
		}
		for _, c := range []*rawConn{conns[0].h, conns[0].r} {
			for _, sc := range scriptLib {
				c.do("SCRIPT", "LOAD", sc.body)
			}
			if got := c.do("FUNCTION", "LOAD", "REPLACE", fnLib); got != "$7\r\ndifflib\r\n" {
				t.Fatalf("FUNCTION LOAD: %q", got)
			}
		}
		var history []string
		scripts := 0
		for done, round := 0, 0; done < *scriptOps; round++ {
			for i := range conns {
				c := &conns[i]
				batch := make([]genCmd, 1+c.g.r.IntN(20))
				for j := range batch {
					batch[j] = c.g.next()
				}
				done += len(batch)
				hr, herr := exchange(c.h, batch)
				rr, rerr := exchange(c.r, batch)
				if herr != nil || rerr != nil {
					t.Fatalf("seed %d round %d conn %d: exchange: HotKV %v, Redis %v", seed, round, i, herr, rerr)
				}
				for j, cmd := range batch {
					history = append(history, fmt.Sprintf("%d> %s", i, quoteArgs(cmd.args)))
					if len(history) > 60 {
						history = history[1:]
					}
					if up := strings.ToUpper(cmd.args[0]); strings.HasPrefix(up, "EVAL") || strings.HasPrefix(up, "FCALL") {
						scripts++
					}
					if !sameReply(cmd, hr[j], rr[j]) {
						t.Fatalf("seed %d round %d conn %d: reply to %s differs:\nHotKV %s\nRedis %s\nlast commands:\n%s",
							seed, round, i, quoteArgs(cmd.args), quote(hr[j]), quote(rr[j]), strings.Join(history, "\n"))
					}
				}
			}
			probe := []genCmd{exact("DBSIZE"), exact(append([]string{"MGET"}, prefixed(conns[0].g.gen, strKeys)...)...)}
			hr, herr := exchange(conns[0].h, probe)
			rr, rerr := exchange(conns[0].r, probe)
			if herr != nil || rerr != nil {
				t.Fatalf("seed %d: probe: HotKV %v, Redis %v", seed, herr, rerr)
			}
			for j := range probe {
				if !bytes.Equal(hr[j], rr[j]) {
					t.Fatalf("seed %d round %d: state differs at %s: HotKV %s, Redis %s\nlast commands:\n%s",
						seed, round, quoteArgs(probe[j].args), quote(hr[j]), quote(rr[j]), strings.Join(history, "\n"))
				}
			}
		}
		t.Logf("seed %d: %d scripts among %d commands", seed, scripts, *scriptOps)
	})
}
