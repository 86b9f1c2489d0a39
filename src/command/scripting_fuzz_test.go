package command

import (
	"bytes"
	"strings"
	"testing"
)

// fuzzBodies are the scripts FuzzScriptCommands runs (arbitrary Lua could loop forever): they
// hand the fuzzer's arguments to redis.call as keys, arguments and command names.
var fuzzBodies = []string{
	"return redis.call('GET', KEYS[1])",
	"return redis.call(ARGV[1], KEYS[1], ARGV[2])",
	"return redis.pcall(ARGV[1], ARGV[2], ARGV[3])",
	"return {KEYS[1], ARGV[1], #KEYS, #ARGV}",
	"redis.setresp(3); return redis.call(ARGV[1], KEYS[1])",
	"return redis.call('SET', ARGV[1], ARGV[2])",
}

// fuzzCommands are the redis.call names the fuzzer may pick (none that pauses or sleeps).
var fuzzCommands = []string{"SET", "GET", "INCR", "DEL", "LPUSH", "HSET", "SADD", "ZADD", "DBSIZE",
	"KEYS", "SCAN", "SELECT", "EXISTS", "MGET", "BLPOP", "EXPIRE", "TYPE", "PUBLISH", "SORT", "FLUSHDB"}

// FuzzScriptCommands runs EVAL, EVALSHA, EVAL_RO, FCALL, FCALL_RO, SCRIPT and FUNCTION with
// arguments cut from the fuzzer's bytes: none may panic (the engine would answer "ERR internal
// error" and close the client).
func FuzzScriptCommands(f *testing.F) {
	f.Add(byte(0), byte(0), []byte("1\x00k\x00v"))
	f.Add(byte(1), byte(1), []byte("2\x00a\x00b\x00SET\x00x"))
	f.Add(byte(3), byte(0), []byte("-1"))
	f.Add(byte(5), byte(0), []byte("LOAD\x00#!lua name=x\nredis.register_function('f', function(k, a) return redis.call('GET', k[1]) end)"))
	f.Add(byte(6), byte(2), []byte("0\x00\x00\x00"))
	f.Add(byte(4), byte(0), []byte("RESTORE\x00\xf5\xc3\x40\x00\x00\x00"))
	e := newTestEngine()
	defer e.Close()
	tc := newTestConn(f, e)
	tc.do("FUNCTION", "LOAD", "#!lua name=fz\nredis.register_function('f', function(k, a) return redis.call('GET', k[1] or 'x') end)")
	f.Fuzz(func(t *testing.T, which, body byte, blob []byte) {
		tc := newTestConn(t, e)
		parts := bytes.Split(blob, []byte{0})
		if len(parts) > 16 {
			parts = parts[:16]
		}
		var args []string
		for _, p := range parts {
			args = append(args, string(p))
		}
		// Command names inside ARGV come from the safe list.
		for i, a := range args {
			if len(a) == 1 {
				args[i] = fuzzCommands[int(a[0])%len(fuzzCommands)]
			}
		}
		src := fuzzBodies[int(body)%len(fuzzBodies)]
		s, _ := e.Scripts().Compile([]byte(src))
		var cmd []string
		switch which % 7 {
		case 0:
			cmd = append([]string{"EVAL", src}, args...)
		case 1:
			cmd = append([]string{"EVALSHA", s.SHA}, args...)
		case 2:
			cmd = append([]string{"EVAL_RO", src}, args...)
		case 3:
			cmd = append([]string{"FCALL", "f"}, args...)
		case 4:
			cmd = append([]string{"FUNCTION"}, args...)
		case 5:
			cmd = append([]string{"SCRIPT"}, args...)
		default:
			cmd = append([]string{"FCALL_RO", "f"}, args...)
		}
		if len(cmd) > 1 && strings.EqualFold(cmd[0], "FUNCTION") && len(args) > 0 && strings.EqualFold(args[0], "FLUSH") {
			return // the fixed library stays for FCALL
		}
		if r := tc.do(cmd...); strings.Contains(r, "internal error") || tc.stream.closed {
			t.Fatalf("%q: %q", cmd, r)
		}
	})
}
