package command

import (
	"bufio"
	"net"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/src/command/meta"
)

// aclPair runs the same commands on a redis-server and on an in-process HotKV engine, over any
// number of named connections, and compares the replies after aclNorm.
type aclPair struct {
	t     *testing.T
	addr  string
	e     *Engine
	redis map[string]*bufio.ReadWriter
	conns map[string]net.Conn
	hk    map[string]*testConn
}

func newACLPair(t *testing.T) *aclPair {
	addr, stop := startRedisAddr(t)
	t.Cleanup(stop)
	p := &aclPair{t: t, addr: addr, e: newTestEngine(), redis: map[string]*bufio.ReadWriter{},
		conns: map[string]net.Conn{}, hk: map[string]*testConn{}}
	st := p.e.Config.(testStore)
	st.OnChange("requirepass", func(string) { // as src/server's settings do
		s := *p.e.Settings()
		s.RequirePass = st.String("requirepass")
		p.e.SetSettings(s)
	})
	for _, name := range []string{"acllog-max-len", "acl-pubsub-default"} { // as src/server does
		st.OnChange(name, func(string) { p.e.SetACLLog(st.Int("acllog-max-len"), st.Int("acl-pubsub-default") == 1) })
	}
	t.Cleanup(func() {
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *aclPair) conn(name string) (*bufio.ReadWriter, *testConn) {
	if p.redis[name] == nil {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			p.t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(2 * time.Minute))
		p.conns[name] = c
		p.redis[name] = bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))
		p.hk[name] = newTestConn(p.t, p.e)
	}
	return p.redis[name], p.hk[name]
}

// run sends args on connection name to both servers and returns both raw replies.
func (p *aclPair) run(name string, args ...string) (hotkv, redis string) {
	p.t.Helper()
	rw, tc := p.conn(name)
	rw.Write(encodeCommand(args))
	rw.Flush()
	raw, err := resptest.ReadRaw(rw.Reader)
	if err != nil {
		p.t.Fatalf("redis %q: %v", args, err)
	}
	return tc.do(args...), string(raw)
}

// same runs args on both and fails unless the normalized replies are equal.
func (p *aclPair) same(name string, args ...string) string {
	p.t.Helper()
	got, want := p.run(name, args...)
	g, w := aclNorm(p.t, got, args), aclNorm(p.t, want, args)
	if g != w {
		p.t.Errorf("%s> %q\nhotkv: %s\nredis: %s", name, args, g, w)
	}
	return got
}

// aclNorm renders a reply for comparison. What Redis does not fix is compared by shape only:
// ACL LOG's age-seconds, and of client-info only the user= and cmd= fields; the single commands
// of described rules as a set (Redis lists them in its command dictionary's order, which its
// hash seed changes); ACL CAT's command lists as sets.
func aclNorm(t *testing.T, raw string, args []string) string {
	t.Helper()
	if raw == "" {
		return "(no reply)"
	}
	v, err := resptest.Parse([]byte(raw))
	if err != nil {
		t.Fatalf("bad reply %q: %v", raw, err)
	}
	v = normValue(v)
	if len(args) == 3 && strings.EqualFold(args[0], "acl") && strings.EqualFold(args[1], "cat") && v.IsAggregate() {
		v.Elems = slices.DeleteFunc(v.Elems, func(e resptest.Value) bool { return meta.Lookup(e.Str) == nil })
		sort.Slice(v.Elems, func(i, j int) bool { return v.Elems[i].Str < v.Elems[j].Str })
	}
	return v.String()
}

func normValue(v resptest.Value) resptest.Value {
	if !v.IsAggregate() {
		if v.Kind == '$' || v.Kind == '+' {
			v.Str = normRules(v.Str)
		}
		return v
	}
	out := v
	out.Elems = make([]resptest.Value, len(v.Elems))
	for i, e := range v.Elems {
		out.Elems[i] = normValue(e)
		if i == 0 {
			continue
		}
		switch v.Elems[i-1].Str {
		case "id": // HELLO's client id
			if e.Kind == ':' {
				out.Elems[i] = resptest.Value{Kind: 'I', Str: "id"}
			}
		case "age-seconds":
			out.Elems[i] = resptest.Value{Kind: 'A', Str: "age"}
		case "client-info":
			var keep []string
			for _, f := range strings.Fields(e.Str) {
				if strings.HasPrefix(f, "user=") || strings.HasPrefix(f, "cmd=") {
					keep = append(keep, f)
				}
			}
			out.Elems[i] = resptest.Value{Kind: 'C', Str: strings.Join(keep, " ")}
		}
	}
	return out
}

// normRules sorts each run of single-command rules (+cmd, -cmd|sub) in a described rule string;
// a token closing a selector ends its run.
func normRules(s string) string {
	toks := strings.Split(s, " ")
	single := func(tok string) bool {
		return len(tok) > 1 && (tok[0] == '+' || tok[0] == '-') && tok[1] != '@'
	}
	for i := 0; i < len(toks); {
		if !single(toks[i]) {
			i++
			continue
		}
		j, closing := i, false
		for j < len(toks) && single(toks[j]) && !closing {
			if strings.HasSuffix(toks[j], ")") {
				closing = true
				toks[j] = strings.TrimSuffix(toks[j], ")")
			}
			j++
		}
		run := slices.DeleteFunc(slices.Clone(toks[i:j]), func(tok string) bool {
			name, _, _ := strings.Cut(tok[1:], "|")
			if sub := strings.SplitN(tok[1:], "|", 2); len(sub) == 2 && meta.Lookup(tok[1:]) != nil {
				return false
			}
			return meta.Lookup(name) == nil || (strings.Contains(tok, "|") && meta.Lookup(name).Subs != nil && meta.Lookup(tok[1:]) == nil)
		})
		sort.Strings(run)
		if closing && len(run) > 0 {
			run[len(run)-1] += ")"
		}
		toks = slices.Concat(toks[:i], run, toks[j:])
		i += len(run)
	}
	return strings.Join(toks, " ")
}
