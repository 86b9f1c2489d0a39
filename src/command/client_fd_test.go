package command

import "testing"

// A client the server never gave a socket (a fake client, as Redis's Lua client) shows fd=-1, as in
// Redis; one given fd 0 shows 0, not "unknown".
func TestClientFdUnknown(t *testing.T) {
	e := newTestEngine()
	fake, zero := newTestConnAt(t, e, "127.0.0.1:50001"), newTestConnAt(t, e, "127.0.0.1:50002")
	zero.client.SetFD(0)
	for _, c := range []struct {
		conn *testConn
		want string
	}{{fake, "-1"}, {zero, "0"}} {
		lines := parseClientLines(t, replyText(t, c.conn.do("CLIENT", "INFO")))
		if got := field(lines[0], "fd"); got != c.want {
			t.Errorf("CLIENT INFO fd=%s, want %s", got, c.want)
		}
	}
	for _, l := range parseClientLines(t, replyText(t, fake.do("CLIENT", "LIST"))) {
		want := map[string]string{"127.0.0.1:50001": "-1", "127.0.0.1:50002": "0"}[field(l, "addr")]
		if got := field(l, "fd"); got != want {
			t.Errorf("CLIENT LIST addr=%s fd=%s, want %s", field(l, "addr"), got, want)
		}
	}
}
