package ipset

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// Merges. A set's pending parts (hosts' delta, the records added or removed since the index was
// built) are merged into new frozen structures by a goroutine, off the shard's token, once they
// pass max(pendMin, base/8); the writer that next changes the set (or Settle, from the shard's
// active cycle) swaps the result in under the token, so a reader sees the old structures or the
// new ones, never a mix. The protocol:
//
//  1. The writer starts a job with a snapshot: the slots' ends (recs' lo and hi and r6, never
//     rewritten while their slot is taken), a copy of the live bitmap, the old index (immutable,
//     for its order) and a copy of the pending slots. Hosts freeze their delta instead (hosts.go).
//  2. The job reads only the snapshot: the live slots' ranges. Writers go on adding to the
//     pending part and removing (marking dead) while it runs; a slot it may read is never
//     rewritten, since slots freed before the snapshot are not in it and removed ones are not
//     reused before the index that leaves them out is in.
//  3. install (a writer, under the token) takes the new index, frees the slots removed before
//     the snapshot, and keeps as pending only what was added after it.
//
// One job per set at a time: while one runs the pending part grows past the threshold.

// pendMin is the smallest pending part merged (tests lower it to exercise merges).
var pendMin = 4096

// pacer makes a merge on a goroutine yield its P every paceEvery steps of its loops. With one P
// (--threads 1) the connection poller and a merge share it, and the runtime lets a running
// goroutine keep it until it blocks or is preempted (10 ms and more): a merge of a 200k-host base
// then held every client's replies and a RENAME behind it (the refresh trace in
// benchmarks/results/2026-12-02-ipsets.md, run 6). A nil pacer (an inline merge, under the
// token) never yields.
type pacer struct{ n int }

// paceEvery is about 50-100 µs of a merge loop's steps.
const paceEvery = 1 << 14

// paceYields counts the pacers' yields (for tests).
var paceYields atomic.Int64

func (p *pacer) step() { p.steps(1) }

// steps counts k steps at once, for work done in one call that cannot yield inside.
func (p *pacer) steps(k int) {
	if p == nil {
		return
	}
	if p.n += k; p.n >= paceEvery {
		p.n = 0
		paceYields.Add(1)
		runtime.Gosched()
	}
}

// sortRun is the longest run sortPaced sorts in one call (about 100 µs of record comparisons).
const sortRun = 2048

// sortPaced sorts a by cmp, yielding through p (slices.SortFunc when p is nil): runs of sortRun
// elements are sorted each in one call, then merged pairwise through a scratch buffer with a
// step an element. One slices.Sort cannot yield: sorting a 100,000-host delta in a merge held the
// only P of a --threads 1 server for 10 ms, and every client's reply with it.
func sortPaced[T any](a []T, cmp func(x, y T) int, p *pacer) {
	if p == nil || len(a) <= sortRun {
		slices.SortFunc(a, cmp)
		p.steps(len(a))
		return
	}
	for i := 0; i < len(a); i += sortRun {
		r := a[i:min(i+sortRun, len(a))]
		slices.SortFunc(r, cmp)
		p.steps(len(r) * 8)
	}
	src, dst := a, make([]T, len(a))
	for w := sortRun; w < len(a); w *= 2 {
		for lo := 0; lo < len(a); lo += 2 * w {
			mid, hi := min(lo+w, len(a)), min(lo+2*w, len(a))
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if cmp(src[j], src[i]) < 0 {
					dst[k], j = src[j], j+1
				} else {
					dst[k], i = src[i], i+1
				}
				k++
				p.step()
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

// bg is a merge's run: on a goroutine, or inline for Compact and Rebuild. The writer that
// started it reads its results only after finished (an atomic load, ordered after the run's
// writes) or join.
type bg struct {
	done atomic.Bool
	wait chan struct{} // closed with done
}

// start runs fn, on a goroutine with a pacer unless sync (then with none).
func (b *bg) start(sync bool, fn func(p *pacer)) {
	b.wait = make(chan struct{})
	run := func(p *pacer) {
		fn(p)
		b.done.Store(true)
		close(b.wait)
	}
	if sync {
		run(nil)
	} else {
		go run(&pacer{})
	}
}

func (b *bg) finished() bool { return b.done.Load() }

func (b *bg) join() { <-b.wait }

type job struct {
	bg
	idx        [2]*index
	kc, kr, kd int // len(pendC), len(pendR), len(dead) at the snapshot
	base       int
	took       time.Duration
}

func (s *Set) pending() int { return len(s.pendC) + len(s.pendR) + len(s.dead) }

// poll installs a finished merge.
func (s *Set) poll() {
	if j := s.job; j != nil && j.finished() {
		s.install()
	}
	s.hosts.poll()
}

// Poll installs the merges that finished (a writer does it first too); it changes no answer.
// Call it holding the token.
func (s *Set) Poll() { s.poll() }

// Installable reports whether a merge finished and waits for the token to be installed. Shared
// readers may call it.
func (s *Set) Installable() bool {
	return s.job != nil && s.job.finished() || s.hosts.job != nil && s.hosts.job.finished()
}

// maybeMerge starts the merges whose pending part passed its threshold.
func (s *Set) maybeMerge() {
	if s.job == nil && s.pending() > max(pendMin, s.base/8) {
		s.startJob(false)
	}
	s.hosts.maybeMerge()
}

// startJob snapshots the records and builds their index, on a goroutine unless sync.
func (s *Set) startJob(sync bool) {
	j := &job{kc: len(s.pendC), kr: len(s.pendR), kd: len(s.dead), base: s.nrec}
	v := view{s.recs[:len(s.recs):len(s.recs)], s.r6[:len(s.r6):len(s.r6)]}
	live := slices.Clone(s.live)
	add := make([]uint32, 0, len(s.pendC)+len(s.pendR))
	add = append(append(add, s.pendC...), s.pendR...)
	old := s.idx
	s.job = j
	j.start(sync, func(p *pacer) {
		start := time.Now()
		isLive := func(sl uint32) bool { return live[sl/64]&(1<<(sl%64)) != 0 }
		for f := range j.idx {
			v6 := f == 1
			var fresh, prev []uint32
			for _, sl := range add {
				if v.recs[sl].v6() == v6 && isLive(sl) {
					fresh = append(fresh, sl)
				}
				p.step()
			}
			sortPaced(fresh, v.cmpOrder, p)
			if old[f] != nil {
				prev = old[f].slots()
			}
			p.step()
			j.idx[f] = buildOrdered(v, mergeOrder(v, prev, fresh, isLive, p), v6, false, p)
		}
		j.took = time.Since(start)
	})
}

// install swaps a finished job's index in.
func (s *Set) install() {
	j := s.job
	s.job = nil
	s.idx = j.idx
	s.base = j.base
	for _, i := range s.dead[:j.kd] {
		k := s.recs[i].kind()
		s.free[k] = append(s.free[k], i)
	}
	s.dead = slices.Clone(s.dead[j.kd:])
	restC, restR := s.pendC[j.kc:], s.pendR[j.kr:]
	s.pendC, s.pendR, s.pend4, s.pend6, s.rbk, s.rwide = nil, nil, nil, nil, nil, nil
	s.bits4 = keyBits{}
	s.lens = [2][3]uint64{}
	for _, rest := range [][]uint32{restC, restR} {
		for _, i := range rest {
			if s.recs[i].m&fDead == 0 {
				s.addPending(i)
			}
		}
	}
}

// wait blocks until the job in flight, if any, is done, and installs it.
func (s *Set) wait() {
	if j := s.job; j != nil {
		j.join()
		s.install()
	}
}

// Rebuild builds the frozen index over every record and empties the pending parts (waiting for
// a merge in flight). It changes no answer.
func (s *Set) Rebuild() {
	s.wait()
	if s.pending() > 0 {
		s.startJob(true)
		s.install()
	}
}

// Compact merges every pending part (hosts' too), waiting for them; it changes no answer.
func (s *Set) Compact() {
	s.Rebuild()
	s.hosts.compact()
}

// Unsettled reports whether Settle has work: a pending part or a merge in flight.
func (s *Set) Unsettled() bool {
	return s.pending() > 0 || s.hosts.deltaLen() > 0 || s.Merging()
}

// Merging reports whether a merge is in flight.
func (s *Set) Merging() bool { return s.job != nil || s.hosts.job != nil }

// Settle is the set's idle step, called under the token from time to time (the shard's active
// cycle): it installs finished merges, and when the set has not changed since the last call,
// starts a merge of whatever is pending, so that a set loaded and then only read ends with
// nothing pending. It reports whether it wants to be called again.
func (s *Set) Settle() bool {
	s.poll()
	if s.writes != s.quiet {
		s.quiet = s.writes
		return true
	}
	if s.job == nil && s.pending() > 0 {
		s.startJob(false)
	}
	if s.hosts.job == nil && s.hosts.deltaLen() > 0 {
		s.hosts.startJob(false)
	}
	return s.Merging()
}
