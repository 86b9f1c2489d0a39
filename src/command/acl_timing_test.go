package command

import (
	"testing"

	"github.com/hotkv/hotkv/src/acl"
)

// aclBenchUser is a user with key patterns and command rules, as the side-by-side benchmark's
// (benchmarks/acl.sh): its GET and SET pass the check after matching a pattern.
var aclBenchUser = []string{"ACL", "SETUSER", "bench", "on", ">pw", "%R~other:*", "~key:*", "resetchannels",
	"-@all", "+get", "+set", "+ping"}

func aclBenchConn(tb testing.TB, restricted bool, cmds ...[]string) *hotConn {
	setup := [][]string{{"SET", "key:1", "v"}}
	if restricted {
		setup = append(setup, aclBenchUser, []string{"AUTH", "bench", "pw"})
	}
	return newBatchConn(tb, setup, cmds...)
}

var aclHotCmds = [][]string{{"GET", "key:1"}, {"SET", "key:2", "v"}, {"SET", "key:3", "v", "GET"}}

// GET and SET as a restricted user allocate nothing, as they do for the default user.
func TestACLHotPathAllocatesNothing(t *testing.T) {
	for _, restricted := range []bool{false, true} {
		h := aclBenchConn(t, restricted, aclHotCmds...)
		hotReplies(t, "acl", h)
		checkNoAllocs(t, "acl", h)
	}
}

// BenchmarkACLCheck is the check alone: the default user (one atomic load and a flag) and the
// restricted user (command bit, then the key against its patterns).
func BenchmarkACLCheck(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	tc.do(aclBenchUser...)
	get, set := table["get"], table["set"]
	args := [][][]byte{{[]byte("GET"), []byte("key:123456")}, {[]byte("SET"), []byte("key:123456"), []byte("v")}}
	specs := []*Spec{get, set}
	for _, u := range []struct {
		name string
		user *acl.User
	}{{"default", e.acl.Default().User()}, {"restricted", e.acl.Get("bench").User()}} {
		b.Run(u.name, func(b *testing.B) {
			b.ReportAllocs()
			keys := make([]int, 0, 4)
			i := 0
			for b.Loop() {
				var res aclResult
				res, _, keys = aclCheck(u.user, specs[i&1], args[i&1], keys)
				if res != aclOK {
					b.Fatal("refused")
				}
				i++
			}
		})
	}
}

// BenchmarkACLPipeline serves pipelines of 30 GET/SET as the default user and as the restricted
// one: the difference is the check's cost per command.
func BenchmarkACLPipeline(b *testing.B) {
	for _, restricted := range []bool{false, true} {
		name := "default"
		if restricted {
			name = "restricted"
		}
		b.Run(name, func(b *testing.B) { benchHot(b, aclBenchConn(b, restricted, aclHotCmds...)) })
	}
}
