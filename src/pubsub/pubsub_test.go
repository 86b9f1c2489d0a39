package pubsub

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// globRE is an independent reference for the patterns these tests use ('*' and '?' only).
func globRE(p string) *regexp.Regexp {
	re := "^"
	for _, c := range p {
		switch c {
		case '*':
			re += ".*"
		case '?':
			re += "."
		default:
			re += regexp.QuoteMeta(string(c))
		}
	}
	return regexp.MustCompile(re + "$")
}

type got struct {
	kind             Kind
	pattern, channel string
}

// Random subscribe, unsubscribe and publish against a map-of-sets reference: deliveries,
// counts and listings agree after every step.
func TestAgainstReference(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "ab", "news.x", "news.y", "n*", "news.*", "?b", "*"}
	type key struct {
		kind Kind
		name string
	}
	ref := map[key]map[uint64]bool{}
	var inbox [5][]got
	subs := make([]*Subscriber, 5)
	for i := range subs {
		subs[i] = &Subscriber{ID: uint64(i + 1), Deliver: func(k Kind, p, ch, msg []byte) bool {
			inbox[i] = append(inbox[i], got{k, string(p), string(ch)})
			return false
		}}
	}
	for step := range 5000 {
		i := rng.IntN(len(subs))
		kind := Kind(rng.IntN(int(kinds)))
		name := names[rng.IntN(len(names))]
		k := key{kind, name}
		switch rng.IntN(3) {
		case 0:
			want := !ref[k][subs[i].ID]
			if ref[k] == nil {
				ref[k] = map[uint64]bool{}
			}
			ref[k][subs[i].ID] = true
			if r.Subscribe(kind, name, subs[i]) != want {
				t.Fatalf("step %d: Subscribe(%v, %q) reported %v", step, kind, name, !want)
			}
		case 1:
			want := ref[k][subs[i].ID]
			delete(ref[k], subs[i].ID)
			if len(ref[k]) == 0 {
				delete(ref, k)
			}
			if r.Unsubscribe(kind, name, subs[i]) != want {
				t.Fatalf("step %d: Unsubscribe(%v, %q) reported %v", step, kind, name, !want)
			}
		case 2:
			if kind == Pattern {
				kind = Channel
			}
			for j := range inbox {
				inbox[j] = inbox[j][:0]
			}
			n := r.Publish(kind, []byte(name), []byte("m"), nil)
			want := [5][]got{}
			wantN := 0
			for id := range ref[key{kind, name}] {
				want[id-1] = append(want[id-1], got{kind, "", name})
				wantN++
			}
			if kind == Channel {
				for pk, ids := range ref {
					if pk.kind == Pattern && globRE(pk.name).MatchString(name) {
						for id := range ids {
							want[id-1] = append(want[id-1], got{Pattern, pk.name, name})
							wantN++
						}
					}
				}
			}
			if n != wantN {
				t.Fatalf("step %d: Publish(%q) reached %d, want %d", step, name, n, wantN)
			}
			for j := range inbox {
				cmp := func(a, b got) int { return compareGot(a, b) }
				slices.SortFunc(inbox[j], cmp)
				slices.SortFunc(want[j], cmp)
				if !slices.Equal(inbox[j], want[j]) {
					t.Fatalf("step %d: subscriber %d got %v, want %v", step, j+1, inbox[j], want[j])
				}
			}
		}
		for kd := range kinds {
			var wantNames []string
			for rk := range ref {
				if rk.kind == kd {
					wantNames = append(wantNames, rk.name)
				}
			}
			slices.Sort(wantNames)
			if got := r.Names(kd, nil); !slices.Equal(got, wantNames) {
				t.Fatalf("step %d: Names(%v) = %q, want %q", step, kd, got, wantNames)
			}
			for _, nm := range names {
				if got, want := r.Count(kd, nm), len(ref[key{kd, nm}]); got != want {
					t.Fatalf("step %d: Count(%v, %q) = %d, want %d", step, kd, nm, got, want)
				}
			}
		}
		if got, want := len(*r.pats.Load()), r.Len(Pattern); got != want {
			t.Fatalf("step %d: %d patterns scanned, %d registered", step, got, want)
		}
	}
}

func compareGot(a, b got) int {
	return cmpString(fmt.Sprint(a.kind, a.pattern, a.channel), fmt.Sprint(b.kind, b.pattern, b.channel))
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Subscribers come and go on several goroutines while others publish: no delivery is made to a
// subscriber after its Unsubscribe returned, and the registry ends empty.
func TestConcurrent(t *testing.T) {
	r := New()
	var wg sync.WaitGroup
	var stop atomic.Bool
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				r.Publish(Channel, []byte(fmt.Sprint("ch", p%2)), []byte("m"), nil)
			}
		}()
	}
	var subWG sync.WaitGroup
	for s := range 8 {
		subWG.Add(1)
		go func() {
			defer subWG.Done()
			var gone atomic.Bool
			sub := &Subscriber{ID: uint64(s + 1), Deliver: func(Kind, []byte, []byte, []byte) bool {
				if gone.Load() {
					t.Error("delivery after Unsubscribe returned")
				}
				return false
			}}
			for i := range 300 {
				ch := fmt.Sprint("ch", i%2)
				kind := Channel
				if i%3 == 0 {
					kind, ch = Pattern, "ch*"
				}
				gone.Store(false)
				r.Subscribe(kind, ch, sub)
				r.Unsubscribe(kind, ch, sub)
				gone.Store(true)
			}
		}()
	}
	subWG.Wait()
	stop.Store(true)
	wg.Wait()
	if r.Len(Channel) != 0 || r.Len(Pattern) != 0 || len(*r.pats.Load()) != 0 {
		t.Fatalf("registry not empty: %d channels, %d patterns, %d scanned", r.Len(Channel), r.Len(Pattern), len(*r.pats.Load()))
	}
}

// Subscribers that ask to be woken are handed to the publisher, or woken at once without one.
func TestWake(t *testing.T) {
	r := New()
	woke := 0
	sub := &Subscriber{ID: 1, Deliver: func(Kind, []byte, []byte, []byte) bool { return true },
		Wake: func() { woke++ }}
	r.Subscribe(Channel, "c", sub)
	r.Subscribe(Pattern, "c*", sub)
	var woken []*Subscriber
	if n := r.Publish(Channel, []byte("c"), []byte("m"), &woken); n != 2 || len(woken) != 2 || woke != 0 {
		t.Fatalf("with a list: %d deliveries, %d handed back, %d woken", n, len(woken), woke)
	}
	r.Publish(Channel, []byte("c"), []byte("m"), nil)
	if woke != 2 {
		t.Fatalf("without a list: %d woken, want 2", woke)
	}
}
