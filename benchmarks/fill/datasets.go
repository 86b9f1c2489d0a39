package main

import (
	"fmt"
	"sort"
	"strconv"
)

// options shape a dataset. For the memory datasets n is the number of members; for the collection
// shapes (sets, hashes, zsets, lists) n is the number of keys and members the size of each.
type options struct {
	n       int64
	members int64
	size    int    // value bytes of hashes and lists
	key     string // the key, or the prefix of "key:N" names
	seed    uint64
	part    int // this connection's share of a split dataset: keys part, part+parts, ...
	parts   int
}

// A dataset loads one shape of data through a pipe. total is the member count the progress line
// counts to; count is the command that counts one key's members and shape the keys the load makes,
// for -check.
// With split, load writes only the keys of connection o.part of o.parts, so -conns can share it out.
type dataset struct {
	about string
	total func(o options) int64
	load  func(p *pipe, o options) error
	count string
	shape func(o options) shape
	split bool
}

// A shape is the keys a load makes: keys keys key:0.. (or, single, the one key o.key) of each
// members.
type shape struct {
	keys, each int64
	single     bool
}

func oneKey(o options) shape      { return shape{keys: 1, each: o.n, single: true} }
func eachKey(o options) shape     { return shape{keys: o.n, each: o.members} }
func smallHashes(o options) shape { return shape{keys: o.n / 10, each: 10} }

// chunk is how many members one variadic command carries: big enough that the command count is
// small, small enough that no command comes near a server's argument limits.
const chunk = 256

var datasets = map[string]dataset{
	"intset": {about: "one set of the integers 0..n-1", total: members, count: "SCARD", shape: oneKey,
		load: func(p *pipe, o options) error { return loadSet(p, o.key, o.n, func(i int64) { p.argInt(i) }) }},
	"intset-random": {about: "one set of n distinct random integers in [0, 2^63)", total: members, count: "SCARD", shape: oneKey,
		load: func(p *pipe, o options) error {
			return loadSet(p, o.key, o.n, func(i int64) { p.argInt(int64(mix63(uint64(i), o.seed))) })
		}},
	"strset": {about: "one set of n distinct random 16-byte alphanumeric strings", total: members, count: "SCARD", shape: oneKey,
		load: func(p *pipe, o options) error {
			return loadSet(p, o.key, o.n, func(i int64) {
				p.scratch = appendUniqueWord(p.scratch[:0], uint64(i), o.seed)
				p.arg(p.scratch)
			})
		}},
	"hash": {about: "one hash of n fields field:N with random 16-byte alphanumeric values", total: members, load: loadBigHash,
		count: "HLEN", shape: oneKey},
	"zset": {about: "one sorted set of n members member:N with random scores in [0, 1)", total: members, load: loadBigZset,
		count: "ZCARD", shape: oneKey},
	"smallhash": {about: "n/10 hashes key:N of 10 fields field:0..field:9 with random 10-byte values", total: members,
		load: loadSmallHashes, count: "HLEN", shape: smallHashes},
	"sets": {about: "n sets key:N of the members element:0..members-1", total: perKey, load: loadSets, count: "SCARD", shape: eachKey},
	"hashes": {about: "n hashes key:N of the fields field:0..members-1 with size-byte values", total: perKey, load: loadHashes,
		count: "HLEN", shape: eachKey},
	"zsets": {about: "n sorted sets key:N of the members member:0..members-1, random scores in [0, 1)", total: perKey,
		load: loadZsets, count: "ZCARD", shape: eachKey},
	"lists": {about: "n lists key:N of members size-byte elements", total: perKey, load: loadLists, count: "LLEN", shape: eachKey},
	"small-list": {about: "n lists key:N of members random size-byte elements, one RPUSH per element", total: perKey,
		load: smallLoader(smallList), count: "LLEN", shape: eachKey, split: true},
	"small-set": {about: "n sets key:N of members random size-byte members, one SADD per member", total: perKey,
		load: smallLoader(smallSet), count: "SCARD", shape: eachKey, split: true},
	"small-hash": {about: "n hashes key:N of the fields f:0..members-1 with random size-byte values, one HSET per field",
		total: perKey, load: smallLoader(smallHash), count: "HLEN", shape: eachKey, split: true},
	"small-zset": {about: "n sorted sets key:N of members random size-byte members, random scores, one ZADD per member",
		total: perKey, load: smallLoader(smallZset), count: "ZCARD", shape: eachKey, split: true},
}

func members(o options) int64 { return o.n }
func perKey(o options) int64  { return o.n * o.members }

// names lists the datasets for the usage text.
func names() []string {
	var out []string
	for name, d := range datasets {
		out = append(out, fmt.Sprintf("  %-14s %s", name, d.about))
	}
	sort.Strings(out)
	return out
}

// loadSet SADDs members 0..n-1 of one set, as member(i) encodes them; every SADD must add all of its
// members, which proves them distinct and the key empty before.
func loadSet(p *pipe, key string, n int64, member func(i int64)) error {
	return loadChunked(p, "SADD", key, 0, n, 1, member, added)
}

// loadChunked writes members from..to-1 of one key as variadic cmd commands of up to chunk
// members, each member per arguments written by item(i); want(from, k) is the integer reply a
// command writing k members from member from must get.
func loadChunked(p *pipe, cmd, key string, from, to int64, per int, item func(i int64),
	want func(from, k int64) int64) error {
	for ; from < to; from += chunk {
		k := min(chunk, to-from)
		p.begin(2 + per*int(k))
		p.argString(cmd)
		p.argString(key)
		for i := from; i < from+k; i++ {
			item(i)
		}
		if err := p.end(cmd, want(from, k), int(k)); err != nil {
			return err
		}
	}
	return nil
}

// added is the reply of a command that adds all of its k members (SADD, HSET, ZADD).
func added(_, k int64) int64 { return k }

func loadBigHash(p *pipe, o options) error {
	var value []byte
	return loadHash(p, o.key, 0, o.n, func(i int64) {
		p.argNamed("field:", i)
		value = appendWord(value[:0], uint64(i), o.seed, 16)
		p.arg(value)
	})
}

// loadHash HSETs fields from..to-1 of one hash, as field(i) encodes each field and its value.
func loadHash(p *pipe, key string, from, to int64, field func(i int64)) error {
	return loadChunked(p, "HSET", key, from, to, 2, field, added)
}

func loadBigZset(p *pipe, o options) error {
	return loadZset(p, o.key, o.n, o.seed)
}

// loadZset ZADDs member:0..member:n-1 with scores from unitFloat, written in the shortest form that
// reads back as the same double.
func loadZset(p *pipe, key string, n int64, seed uint64) error {
	var score []byte
	return loadChunked(p, "ZADD", key, 0, n, 2, func(i int64) {
		score = strconv.AppendFloat(score[:0], unitFloat(uint64(i), seed), 'g', -1, 64)
		p.arg(score)
		p.argNamed("member:", i)
	}, added)
}

// loadSmallHashes writes o.n fields as o.n/10 hashes of ten: a hash per command.
func loadSmallHashes(p *pipe, o options) error {
	var value []byte
	for h := int64(0); h < o.n/10; h++ {
		p.begin(22)
		p.argString("HSET")
		p.argNamed(o.key+":", h)
		for f := range int64(10) {
			p.argNamed("field:", f)
			value = appendWord(value[:0], uint64(h*10+f), o.seed, 10)
			p.arg(value)
		}
		if err := p.end("HSET", 10, 10); err != nil {
			return err
		}
	}
	return nil
}

// The collection shapes of the collections benchmark: every key holds the same members, so that a
// template drawing a key number and a member number from one range always finds both.

func loadSets(p *pipe, o options) error {
	for c := range o.n {
		key := o.key + ":" + strconv.FormatInt(c, 10)
		if err := loadSet(p, key, o.members, func(i int64) { p.argNamed("element:", i) }); err != nil {
			return err
		}
	}
	return nil
}

func loadHashes(p *pipe, o options) error {
	value := appendWord(nil, 0, o.seed, o.size)
	for c := range o.n {
		key := o.key + ":" + strconv.FormatInt(c, 10)
		err := loadHash(p, key, 0, o.members, func(i int64) {
			p.argNamed("field:", i)
			p.arg(value)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func loadZsets(p *pipe, o options) error {
	for c := range o.n {
		if err := loadZset(p, o.key+":"+strconv.FormatInt(c, 10), o.members, o.seed+uint64(c)); err != nil {
			return err
		}
	}
	return nil
}

// loadLists RPUSHes o.members elements onto each list; RPUSH answers the new length, which must be
// the count pushed so far (so the list was empty).
func loadLists(p *pipe, o options) error {
	value := appendWord(nil, 0, o.seed, o.size)
	for c := range o.n {
		key := o.key + ":" + strconv.FormatInt(c, 10)
		err := loadChunked(p, "RPUSH", key, 0, o.members, 1, func(int64) { p.arg(value) },
			func(from, k int64) int64 { return from + k })
		if err != nil {
			return err
		}
	}
	return nil
}
