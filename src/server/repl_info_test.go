package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/src/config"
	"github.com/redis/go-redis/v9"
)

// infoShape is INFO replication as field names with the shape of each value (digits become
// 9s, hex ids become x), so two servers in the same topology compare field for field.
func infoShape(t *testing.T, c *redis.Client) []string {
	t.Helper()
	s, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	num := regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`)
	hexID := regexp.MustCompile(`^[0-9a-f]{40}$`)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\r\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			out = append(out, l)
			continue
		}
		switch {
		case hexID.MatchString(v):
			v = "x"
		case k == "master_port" || strings.HasPrefix(k, "slave") && strings.Contains(v, "port="):
			v = num.ReplaceAllString(v, "9")
		default:
			v = num.ReplaceAllString(v, "9")
		}
		out = append(out, k+":"+v)
	}
	return out
}

// INFO replication of a HotKV primary (with a Redis replica) and of a HotKV replica (of a Redis
// primary) have redis-server's fields, in its order, with values of the same shape as Redis's in
// the same place of the same topology; ROLE too.
func TestReplInfoFieldsAgainstRedis(t *testing.T) {
	ctx := context.Background()
	// Reference: a Redis primary with a Redis replica.
	rpPort := replPort(t)
	rp := startRedisAt(t, rpPort)
	rr := startRedisAt(t, replPort(t), "--replicaof", "127.0.0.1", strconv.Itoa(rpPort))
	// HotKV primary with a Redis replica, and a HotKV replica of the Redis primary.
	hpPort := replPort(t)
	_, hp := startHotKVAt(t, hpPort)
	hr2 := startRedisAt(t, replPort(t), "--replicaof", "127.0.0.1", strconv.Itoa(hpPort))
	_, hr := startHotKVAt(t, replPort(t))
	if err := hr.Do(ctx, "REPLICAOF", "127.0.0.1", rpPort).Err(); err != nil {
		t.Fatal(err)
	}
	rp.Set(ctx, "k", "v", 0)
	hp.Set(ctx, "k", "v", 0)
	waitInSync(t, rp, rr)
	waitInSync(t, hp, hr2)
	waitInSync(t, rp, hr)
	// The Redis primary has two replicas now (rr and hr); compare a one-replica primary's lines
	// with the HotKV primary's, and the replicas' with each other.
	want := infoShape(t, rp)
	got := infoShape(t, hp)
	var want1 []string
	for _, l := range want {
		if !strings.HasPrefix(l, "slave1:") {
			want1 = append(want1, l)
		}
	}
	compareShapes(t, "primary", want1, got)
	compareShapes(t, "replica", infoShape(t, rr), infoShape(t, hr))
	for _, pair := range [][2]*redis.Client{{rr, hr}} {
		w, _ := pair[0].Do(ctx, "ROLE").Slice()
		g, _ := pair[1].Do(ctx, "ROLE").Slice()
		if len(w) != len(g) || w[0] != g[0] || w[3] != g[3] {
			t.Errorf("ROLE: HotKV %v, Redis %v", g, w)
		}
	}
	w, _ := hp.Do(ctx, "ROLE").Slice()
	if len(w) != 3 || w[0] != "master" || len(w[2].([]any)) != 1 {
		t.Errorf("HotKV primary ROLE %v", w)
	}
}

func compareShapes(t *testing.T, what string, want, got []string) {
	t.Helper()
	if len(want) < 10 {
		t.Fatalf("%s: Redis's INFO replication has %d lines", what, len(want))
	}
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("%s INFO replication differs:\nRedis:\n%s\nHotKV:\n%s", what, strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}

// REPLICAOF and SLAVEOF update the replicaof directive as redis-server 7.0.15's do: CONFIG GET
// shows it, CONFIG REWRITE writes "replicaof host port", and after NO ONE the line is gone.
func TestReplReplicaofConfigAgainstRedis(t *testing.T) {
	ctx := context.Background()
	dead := strconv.Itoa(replPort(t)) // nothing listens: both keep trying to connect
	rdir := t.TempDir()
	rconf := filepath.Join(rdir, "redis.conf")
	if err := os.WriteFile(rconf, []byte("save \"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := startRedisFile(t, rconf, replPort(t))
	hdir := t.TempDir()
	hconf := filepath.Join(hdir, "hotkv.conf")
	if err := os.WriteFile(hconf, []byte("save \"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hp := replPort(t)
	cfg, err := config.Load([]string{hconf, "--port", strconv.Itoa(hp), "--bind", "127.0.0.1", "--threads", "1", "--dir", hdir})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	serveTestServer(t, s)
	hk := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(hp), Protocol: 2, MaxRetries: -1})
	defer hk.Close()
	// line returns the file's replicaof line, or "".
	line := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "replicaof") || strings.HasPrefix(l, "slaveof") {
				return l
			}
		}
		return ""
	}
	step := func(cmd ...any) {
		t.Helper()
		var got [2]string
		for i, c := range []*redis.Client{rc, hk} {
			if err := c.Do(ctx, cmd...).Err(); err != nil {
				t.Fatalf("%v: %v", cmd, err)
			}
			v, err := c.ConfigGet(ctx, "replicaof").Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.ConfigRewrite(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			got[i] = fmt.Sprintf("CONFIG GET %q, file %q", v["replicaof"], line([]string{rconf, hconf}[i]))
		}
		if got[0] != got[1] {
			t.Fatalf("after %v: Redis %s, HotKV %s", cmd, got[0], got[1])
		}
		t.Logf("after %v: %s", cmd, got[0])
	}
	step("REPLICAOF", "127.0.0.1", dead)
	step("SLAVEOF", "localhost", dead)
	step("REPLICAOF", "NO", "ONE")
	for i, c := range []*redis.Client{rc, hk} {
		if err := c.ConfigSet(ctx, "replicaof", "127.0.0.1 "+dead).Err(); err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Fatalf("server %d: CONFIG SET replicaof: %v", i, err)
		}
	}
}
