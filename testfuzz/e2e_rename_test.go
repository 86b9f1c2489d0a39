package testfuzz

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hotkv/hotkv/src/config"
	_ "github.com/hotkv/hotkv/src/server" // checks rename-command while loading
)

// rename-command as redis-server 7.0.15 applies it: the new name runs the command (whose errors
// still name it by its own name), the old name and a removed command are unknown, a command may
// take a freed name, and the renames hold inside MULTI. Bad lines fail loading with Redis's FATAL
// CONFIG FILE ERROR text, line number included.
func TestRenameCommandAgainstRedis(t *testing.T) {
	args := []string{"--rename-command", "get", "fetch", "--rename-command", "flushall", "",
		"--rename-command", "set", "get", "--rename-command", "DEBUG", "dbg"}
	cases := []struct{ name, in, want string }{
		{"set under get", "*3\r\n$3\r\nGET\r\n$1\r\nk\r\n$1\r\nv\r\n", "+OK\r\n"},
		{"get under fetch", "*2\r\n$5\r\nFetch\r\n$1\r\nk\r\n", "$1\r\nv\r\n"},
		{"old set unknown", "*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n",
			"-ERR unknown command 'set', with args beginning with: 'k' 'v' \r\n"},
		{"removed flushall", "FLUSHALL\r\n", "-ERR unknown command 'FLUSHALL', with args beginning with: \r\n"},
		{"arity names the command", "*1\r\n$5\r\nfetch\r\n", "-ERR wrong number of arguments for 'get' command\r\n"},
		{"inline", "fetch k\r\n", "$1\r\nv\r\n"},
		{"multi", "MULTI\r\nget k2 w\r\nfetch k2\r\nset x y\r\nEXEC\r\n",
			"+OK\r\n+QUEUED\r\n+QUEUED\r\n-ERR unknown command 'set', with args beginning with: 'x' 'y' \r\n" +
				"-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{"renamed debug still gated", "dbg sleep 0\r\n",
			"-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n"},
	}
	// Scripts see the renamed table as clients do.
	cases = append(cases,
		struct{ name, in, want string }{"script: set under get",
			string(appendCommand(nil, "EVAL", "return redis.call('get','sk','sv')", "0")), "+OK\r\n"},
		struct{ name, in, want string }{"script: get under fetch",
			string(appendCommand(nil, "EVAL", "return redis.call('FETCH','sk')", "0")), "$2\r\nsv\r\n"},
		struct{ name, in, want string }{"script: old set unknown",
			string(appendCommand(nil, "EVAL", "return redis.pcall('set','sk','v')", "0")),
			"-ERR Unknown Redis command called from script\r\n"},
		struct{ name, in, want string }{"script: removed flushall",
			string(appendCommand(nil, "EVAL", "return redis.pcall('flushall')", "0")),
			"-ERR Unknown Redis command called from script\r\n"},
	)
	// COMMAND describes the renamed table: by new names only, the removed command left out.
	cases = append(cases,
		struct{ name, in, want string }{"COMMAND INFO removed and old name", "COMMAND INFO flushall set\r\n", "*2\r\n$-1\r\n$-1\r\n"},
		struct{ name, in, want string }{"COMMAND GETKEYS new name", "COMMAND GETKEYS fetch k\r\n", "*1\r\n$1\r\nk\r\n"},
		struct{ name, in, want string }{"COMMAND GETKEYS old name", "COMMAND GETKEYS set k v\r\n", "-ERR Invalid command specified\r\n"},
		struct{ name, in, want string }{"COMMAND DOCS removed", "COMMAND DOCS flushall\r\n", "*0\r\n"},
		struct{ name, in, want string }{"COMMAND LIST FILTERBY PATTERN", "COMMAND LIST FILTERBY PATTERN flush*\r\n", "*1\r\n$7\r\nflushdb\r\n"},
	)
	hotkv, _ := startHotKV(t, args...)
	redis := maybeRedis(t, args...)
	for _, tc := range cases {
		if got := transcript(t, hotkv, tc.in); got != tc.want {
			t.Errorf("%s: HotKV replied %s, want %s", tc.name, quote(got), quote(tc.want))
		}
		if redis != "" {
			if got := transcript(t, redis, tc.in); got != tc.want {
				t.Errorf("%s: redis-server replied %s, the test expects %s", tc.name, quote(got), quote(tc.want))
			}
		}
	}

	// COMMAND INFO under a new name is the command's own entry; COUNT lost the removed command.
	plainHotKV, _ := startHotKV(t)
	for _, pair := range [][2]string{{hotkv, plainHotKV}, {redis, maybeRedis(t)}} {
		if pair[0] == "" {
			continue
		}
		renamed, plain := dial(t, pair[0]), dial(t, pair[1])
		if got, want := renamed.do("COMMAND", "INFO", "fetch"), plain.do("COMMAND", "INFO", "get"); got != want {
			t.Errorf("COMMAND INFO fetch %s, COMMAND INFO get without renames %s", quote(got), quote(want))
		}
		n1, _ := replyInt(renamed.do("COMMAND", "COUNT"))
		n0, _ := replyInt(plain.do("COMMAND", "COUNT"))
		if n0-n1 != 1 {
			t.Errorf("COMMAND COUNT %d with renames, %d without: want one less (FLUSHALL)", n1, n0)
		}
	}

	dir := t.TempDir()
	for _, bad := range []string{
		"port 0\nrename-command get fetch\nrename-command nosuch x\n",
		"rename-command get set\n",
		"rename-command get x\nrename-command get y\n",
		"rename-command get x\nrename-command set x\n",
	} {
		file := filepath.Join(dir, "bad.conf")
		os.WriteFile(file, []byte(bad), 0o600)
		_, err := config.Load([]string{file})
		le, ok := err.(*config.LoadError)
		if !ok {
			t.Errorf("%q: HotKV loaded it (%v)", bad, err)
			continue
		}
		if !haveRedis() {
			continue
		}
		out, _ := exec.Command("redis-server", file).CombinedOutput()
		if string(out) != le.Report() {
			t.Errorf("%q: HotKV reports %q, redis-server %q", bad, le.Report(), out)
		}
	}
}
