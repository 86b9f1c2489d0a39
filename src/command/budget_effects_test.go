package command

import (
	"slices"
	"strings"
	"testing"
)

// Effects of CL.THROTTLE and BUDGET.*: keyspace events and the replicated form.
func TestThrottleBudgetEffects(t *testing.T) {
	x := newHashFx(t)
	st := *x.e.Settings()
	st.NotifyKeyspaceEvents |= int64(NotifyModule)
	x.e.SetSettings(st)
	x.events()
	x.feed()

	// CL.THROTTLE: a string write and its expiry, replicated as SET tat PXAT ms.
	x.tc.do("CL.THROTTLE", "lim", "5", "10", "60")
	if got, want := x.events(), slices.Concat(ev("set", "lim"), ev("expire", "lim")); !slices.Equal(got, want) {
		t.Errorf("CL.THROTTLE events %q, want %q", got, want)
	}
	f := x.feed()
	if len(f) != 1 || !strings.HasPrefix(f[0], "0:SET lim ") || !strings.Contains(f[0], " PXAT ") {
		t.Errorf("CL.THROTTLE replicated %q", f)
	}
	// A limited call changes nothing.
	x.tc.do("CL.THROTTLE", "lim", "0", "1", "3600", "5")
	if got := x.events(); len(got) != 0 {
		t.Errorf("a limited CL.THROTTLE raised %q", got)
	}
	if f := x.feed(); len(f) != 0 {
		t.Errorf("a limited CL.THROTTLE replicated %q", f)
	}

	x.tc.do("BUDGET.SET", "t", "LIMIT", "100", "PER", "1h")
	x.tc.do("BUDGET.SET", "u", "LIMIT", "100", "PER", "1h")
	x.events()
	x.feed()
	want := func(what string, got []string, event string, keys ...string) {
		t.Helper()
		var w []string
		for _, k := range keys {
			w = append(w, ev(event, k)...)
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: events %q, want %q", what, got, w)
		}
	}
	states := func(what string, keys ...string) {
		t.Helper()
		var got []string
		for _, c := range x.feed() {
			if c != "0:MULTI" && c != "0:EXEC" {
				got = append(got, c)
			}
		}
		if len(got) != len(keys) {
			t.Fatalf("%s: replicated %q", what, got)
		}
		for i, k := range keys {
			if !strings.HasPrefix(got[i], "0:BUDGET.STATE "+k+" ") {
				t.Errorf("%s: replicated %q, want BUDGET.STATE %s", what, got[i], k)
			}
		}
	}
	x.tc.do("BUDGET.TAKE", "10", "t", "u")
	want("TAKE", x.events(), "budget.take", "t", "u")
	states("TAKE", "t", "u")
	x.tc.do("BUDGET.TAKE", "1000", "t", "u") // denied: nothing
	want("denied TAKE", x.events(), "budget.take")
	states("denied TAKE")
	id := strings.Split(x.tc.do("BUDGET.RESERVE", "5", "t", "u"), "\r\n")[1]
	want("RESERVE", x.events(), "budget.reserve", "t", "u")
	states("RESERVE", "t", "u")
	x.tc.do("BUDGET.COMMIT", id, "3")
	want("COMMIT", x.events(), "budget.commit", "t", "u")
	states("COMMIT", "t", "u")
	id = strings.Split(x.tc.do("BUDGET.RESERVE", "5", "u"), "\r\n")[1]
	x.events()
	x.feed()
	x.tc.do("BUDGET.RELEASE", id)
	want("RELEASE", x.events(), "budget.release", "u")
	states("RELEASE", "u")
	x.tc.do("BUDGET.GET", "t")
	want("GET", x.events(), "budget.get")
	states("GET")
}
