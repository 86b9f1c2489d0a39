package command

import "testing"

// A renamed blocking command still moves off the poller (mayBlock sees through the rename), the
// new name serves while the old and a removed one are unknown, and a pipeline repeating the old
// name after the new one is not served from the route stage's last-command shortcut.
func TestRenames(t *testing.T) {
	e := newTestEngine()
	if err := e.SetRenames([][2]string{{"blpop", "bwait"}, {"get", "fetch"}, {"flushall", ""}}); err != nil {
		t.Fatal(err)
	}
	tc := newTestConn(t, e)
	args := func(s ...string) [][]byte {
		var out [][]byte
		for _, a := range s {
			out = append(out, []byte(a))
		}
		return out
	}
	if !e.mayBlock(tc.client, args("BWAIT", "k", "0")) {
		t.Error("renamed BLPOP: mayBlock false")
	}
	if e.mayBlock(tc.client, args("BLPOP", "k", "0")) {
		t.Error("BLPOP's old name: mayBlock true")
	}
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"SET", "k", "v"}, "+OK\r\n"},
		{[]string{"FETCH", "k"}, "$1\r\nv\r\n"},
		{[]string{"fetch", "k"}, "$1\r\nv\r\n"},
		{[]string{"GET", "k"}, "-ERR unknown command 'GET', with args beginning with: 'k' \r\n"},
		{[]string{"FLUSHALL"}, "-ERR unknown command 'FLUSHALL', with args beginning with: \r\n"},
		{[]string{"BWAIT", "k", "0.01"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
	} {
		if got := tc.do(c.cmd...); got != c.want {
			t.Errorf("%q = %q, want %q", c.cmd, got, c.want)
		}
	}
	for _, bad := range [][][2]string{{{"nosuch", "x"}}, {{"get", "set"}}, {{"get", "x"}, {"get", "y"}}} {
		if err := CheckRenames(bad); err == nil {
			t.Errorf("CheckRenames(%q) accepted", bad)
		}
	}
}
