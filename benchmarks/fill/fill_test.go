package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// fillFake loads a dataset into a fresh fake server and returns the server.
func fillFake(t *testing.T, dataset string, o options) *fakeServer {
	t.Helper()
	s := startFake(t)
	if o.key == "" {
		o.key = dataset
	}
	if err := load(&config{addr: s.addr, dataset: dataset, opts: o, timeout: 10 * time.Second}, nil); err != nil {
		t.Fatalf("%s: %v", dataset, err)
	}
	s.mu.Lock() // the test reads the maps the server's goroutine wrote
	defer s.mu.Unlock()
	return s
}

func TestMemoryDatasets(t *testing.T) {
	const n = 3000 // more than one chunk, and not a multiple of it
	s := fillFake(t, "intset", options{n: n})
	for i := range n {
		if !s.sets["intset"][strconv.Itoa(i)] {
			t.Fatalf("intset lacks %d", i)
		}
	}
	if len(s.sets["intset"]) != n {
		t.Fatalf("intset has %d members", len(s.sets["intset"]))
	}

	s = fillFake(t, "intset-random", options{n: n, seed: 1})
	for m := range s.sets["intset-random"] {
		if v, err := strconv.ParseInt(m, 10, 64); err != nil || v < 0 {
			t.Fatalf("intset-random member %q is not a non-negative int64", m)
		}
	}
	if len(s.sets["intset-random"]) != n {
		t.Fatalf("intset-random has %d members", len(s.sets["intset-random"]))
	}

	s = fillFake(t, "strset", options{n: n, seed: 1})
	for m := range s.sets["strset"] {
		if len(m) != 16 || strings.Trim(m, alphabet) != "" {
			t.Fatalf("strset member %q", m)
		}
	}
	if len(s.sets["strset"]) != n {
		t.Fatalf("strset has %d members", len(s.sets["strset"]))
	}
}

func TestHashAndZsetDatasets(t *testing.T) {
	const n = 1000
	s := fillFake(t, "hash", options{n: n, seed: 1})
	h := s.hashes["hash"]
	if len(h) != n || len(h["field:0"]) != 16 || len(h["field:999"]) != 16 || h["field:0"] == h["field:1"] {
		t.Fatalf("hash: %d fields, field:0=%q field:1=%q", len(h), h["field:0"], h["field:1"])
	}

	s = fillFake(t, "zset", options{n: n, seed: 1})
	z := s.zsets["zset"]
	if len(z) != n {
		t.Fatalf("zset has %d members", len(z))
	}
	for i := range n {
		score, ok := z["member:"+strconv.Itoa(i)]
		f, err := strconv.ParseFloat(score, 64)
		if !ok || err != nil || f < 0 || f >= 1 {
			t.Fatalf("member:%d has score %q", i, score)
		}
	}

	s = fillFake(t, "smallhash", options{n: n, seed: 1})
	if len(s.hashes) != n/10 {
		t.Fatalf("smallhash made %d hashes", len(s.hashes))
	}
	for key, fields := range s.hashes {
		if len(fields) != 10 || len(fields["field:9"]) != 10 || !strings.HasPrefix(key, "smallhash:") {
			t.Fatalf("%s: %v", key, fields)
		}
	}
}

// The collection shapes give every key the same members, which the benchmark's templates rely on.
func TestCollectionShapes(t *testing.T) {
	o := options{n: 3, members: 300, size: 7, seed: 1}
	s := fillFake(t, "sets", o)
	h := fillFake(t, "hashes", o)
	z := fillFake(t, "zsets", o)
	l := fillFake(t, "lists", o)
	for c := range 3 {
		k := strconv.Itoa(c)
		if len(s.sets["sets:"+k]) != 300 || !s.sets["sets:"+k]["element:299"] {
			t.Errorf("sets:%s: %d members", k, len(s.sets["sets:"+k]))
		}
		if len(h.hashes["hashes:"+k]) != 300 || len(h.hashes["hashes:"+k]["field:299"]) != 7 {
			t.Errorf("hashes:%s: %d fields", k, len(h.hashes["hashes:"+k]))
		}
		if _, ok := z.zsets["zsets:"+k]["member:299"]; !ok || len(z.zsets["zsets:"+k]) != 300 {
			t.Errorf("zsets:%s: %d members", k, len(z.zsets["zsets:"+k]))
		}
		if l.lists["lists:"+k] != 300 {
			t.Errorf("lists:%s holds %d", k, l.lists["lists:"+k])
		}
	}
}

// The small-collection datasets: one command per element over several connections, every key with
// its members of size bytes (a hash's fields f:0..), the same data however many connections load it.
func TestSmallCollections(t *testing.T) {
	load3 := func(dataset string, o options, conns int) *fakeServer {
		t.Helper()
		s := startFake(t)
		cfg := &config{addr: s.addr, dataset: dataset, opts: o, conns: conns, timeout: 10 * time.Second}
		if err := load(cfg, nil); err != nil {
			t.Fatalf("%s over %d connections: %v", dataset, conns, err)
		}
		check := *cfg
		check.check, check.quiet = true, true
		if err := checkSizes(&check); err != nil {
			t.Fatalf("%s: -check after the load: %v", dataset, err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s
	}
	for _, size := range []int{16, 256} {
		o := options{n: 10, members: 5, size: size, seed: 1} // 10 keys over 3 connections: uneven shares
		o.key = "set"
		sets, again := load3("small-set", o, 3), load3("small-set", o, 1)
		o.key = "hash"
		hashes := load3("small-hash", o, 3)
		o.key = "zset"
		zsets := load3("small-zset", o, 3)
		o.key = "list"
		lists := load3("small-list", o, 3)
		if len(sets.sets) != 10 || len(hashes.hashes) != 10 || len(zsets.zsets) != 10 || len(lists.lists) != 10 {
			t.Fatalf("size %d: %d sets, %d hashes, %d zsets, %d lists", size, len(sets.sets), len(hashes.hashes), len(zsets.zsets), len(lists.lists))
		}
		for k := range 10 {
			n := strconv.Itoa(k)
			set := sets.sets["set:"+n]
			if len(set) != 5 || lists.lists["list:"+n] != 5 || len(zsets.zsets["zset:"+n]) != 5 {
				t.Fatalf("size %d, key %d: set %d members, list %d, zset %d", size, k, len(set), lists.lists["list:"+n], len(zsets.zsets["zset:"+n]))
			}
			for m := range set {
				if len(m) != size || strings.Trim(m, alphabet) != "" || !again.sets["set:"+n][m] {
					t.Fatalf("set:%d member %q (or not loaded alike over one connection)", k, m)
				}
			}
			for m, score := range zsets.zsets["zset:"+n] {
				if f, err := strconv.ParseFloat(score, 64); len(m) != size || err != nil || f < 0 || f >= 1 {
					t.Fatalf("zset:%d member %q score %q", k, m, score)
				}
			}
			h := hashes.hashes["hash:"+n]
			if len(h) != 5 || len(h["f:0"]) != size || len(h["f:4"]) != size || h["f:0"] == h["f:1"] {
				t.Fatalf("hash:%d: %v", k, h)
			}
		}
	}
}

func TestLoadFailures(t *testing.T) {
	f := func(dataset, failOn, want string, prepare func(s *fakeServer)) {
		t.Helper()
		s := startFake(t)
		s.mu.Lock()
		s.failOn = failOn
		if prepare != nil {
			prepare(s)
		}
		s.mu.Unlock()
		cfg := &config{addr: s.addr, dataset: dataset, opts: options{n: 2000, members: 10, key: dataset}, timeout: 10 * time.Second}
		err := load(cfg, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %v, want %q", dataset, err, want)
		}
	}
	f("strset", "SADD", "error reply to SADD: ERR injected failure", nil)
	// a key that already held members makes the counts disagree
	f("intset", "", "SADD replied 255, want 256", func(s *fakeServer) { s.sets["intset"] = map[string]bool{"7": true} })
	f("lists", "", "RPUSH replied 11, want 10", func(s *fakeServer) { s.lists["lists:0"] = 1 })
	f("small-list", "", "RPUSH replied 2, want 1", func(s *fakeServer) { s.lists["small-list:7"] = 1 })
	f("small-set", "SADD", "error reply to SADD: ERR injected failure", nil)
	if err := load(&config{addr: "127.0.0.1:1", dataset: "intset", opts: options{n: 1}, timeout: time.Second}, nil); err == nil {
		t.Fatal("loading into a closed port worked")
	}
}

func TestCheckSizes(t *testing.T) {
	s := startFake(t)
	f := func(want string, atLeast bool, dataset string, o options) {
		t.Helper()
		cfg := &config{addr: s.addr, dataset: dataset, opts: o, check: true, atLeast: atLeast, timeout: 10 * time.Second, quiet: true}
		err := checkSizes(cfg)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s %+v (at least %v): error %v, want %q", dataset, o, atLeast, err, want)
		}
	}
	s.mu.Lock()
	s.lists["plist:0"], s.lists["plist:1"], s.lists["plist:2"] = 5, 2, 9
	s.mu.Unlock()
	f("", true, "lists", options{n: 3, members: 1, key: "plist"})
	f("the smallest of plist:0..2 holds 2, want at least 3", true, "lists", options{n: 3, members: 3, key: "plist"})
	f("LLEN plist:0 replied 5, want 2", false, "lists", options{n: 3, members: 2, key: "plist"})
	s.mu.Lock()
	s.lists["plist:1"] = 0
	s.mu.Unlock()
	f("the smallest of plist:0..2 holds 0, want at least 1", true, "lists", options{n: 3, members: 1, key: "plist"})

	// What a load made passes; a key that lost a member, or was never loaded, fails.
	fillInto := func(dataset string, o options) {
		t.Helper()
		if err := load(&config{addr: s.addr, dataset: dataset, opts: o, timeout: 10 * time.Second}, nil); err != nil {
			t.Fatal(err)
		}
	}
	coll := options{n: 4, members: 300, size: 7, seed: 1}
	for _, ds := range []string{"sets", "hashes", "zsets", "lists"} {
		o := coll
		o.key = "c" + ds
		fillInto(ds, o)
		f("", false, ds, o)
	}
	mem := options{n: 1000, seed: 1}
	for _, ds := range []string{"intset", "hash", "zset", "smallhash"} {
		o := mem
		o.key = ds
		fillInto(ds, o)
		f("", false, ds, o)
	}
	s.mu.Lock()
	delete(s.sets["csets:0"], "element:7")
	delete(s.hashes, "smallhash:99")
	s.mu.Unlock()
	f("SCARD csets:0 replied 299, want 300", false, "sets", options{n: 4, members: 300, key: "csets"})
	f("HLEN smallhash:99 replied 0, want 10", false, "smallhash", options{n: 1000, key: "smallhash"})
	f("ZCARD nothing replied 0, want 1000", false, "zset", options{n: 1000, key: "nothing"})
}

func TestFlags(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		_, err := parseFlags(args, &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: error %v, want %q", args, err, want)
		}
	}
	f("unknown -dataset", "-dataset", "nope")
	f("-n and -members must be positive", "-dataset", "intset", "-n", "0")
	f("-at-least needs -check", "-dataset", "lists", "-at-least")
	f("unexpected arguments", "-dataset", "intset", "extra")
	f("-conns is for the small-* datasets", "-dataset", "lists", "-conns", "2")
	f("-size must be at least 16", "-dataset", "small-zset", "-size", "8")
	cfg, err := parseFlags([]string{"-dataset", "zset", "-port", "7000"}, &strings.Builder{})
	if err != nil || cfg.opts.key != "zset" || cfg.addr != "127.0.0.1:7000" || cfg.opts.n != 1_000_000 {
		t.Fatalf("%+v %v", cfg, err)
	}
}
