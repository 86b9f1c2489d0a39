// Command gen writes the seeded files of the IP-set benchmarks and oracles (benchmarks/ipsets/data.sh
// runs it): n distinct IPv4 hosts, query files with half hits, the boundaries of a list of networks,
// and the commands that load the same data into Redis as a SET and as a ZSET of ranges.
//
//	gen -hosts 1000000 -seed 1 -out DIR            # DIR/hosts.txt, hosts-queries.txt
//	gen -nets DIR/drop.txt -queries 200000 -out DIR -name drop   # DIR/drop-queries.txt (hits, misses, boundaries)
//	gen -zadd DIR/libloc4.txt -name libloc4 -out DIR   # DIR/libloc4-zadd.resp for Redis
//	gen -ranges /usr/share/tor/geoip -out DIR      # DIR/tor4.txt (lo-hi label), tor4-zadd.resp, tor4-queries.txt, tor4-ints.txt
//
// Every output is a function of the inputs and -seed. Exit status: 0, or 1 on any error.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	hosts := flag.Int("hosts", 0, "write this many distinct random IPv4 hosts to OUT/hosts.txt and 2x queries (half hits)")
	nets := flag.String("nets", "", "a file of CIDRs (one a line): write NAME-queries.txt")
	ranges := flag.String("ranges", "", "Tor's geoip file (lo,hi,CC with decimal IPv4 bounds): write tor4 files")
	queries := flag.Int("queries", 200000, "random queries per query file (boundaries come on top)")
	name := flag.String("name", "drop", "name of the -nets query file")
	zadd := flag.String("zadd", "", "a file of IPv4 'prefix label' lines: write NAME-zadd.resp, ZADD NAME <last address> <prefix label>")
	seed := flag.Uint64("seed", 1, "seed")
	out := flag.String("out", ".", "output folder")
	flag.Parse()
	rng := rand.New(rand.NewPCG(*seed, 0x1b873593))
	var err error
	switch {
	case *hosts > 0:
		err = writeHosts(*out, *hosts, *queries, rng)
	case *nets != "":
		err = writeNetQueries(*out, *name, *nets, *queries, rng)
	case *zadd != "":
		err = writeZadd(*out, *name, *zadd)
	case *ranges != "":
		err = writeRanges(*out, *ranges, *queries, rng)
	default:
		err = fmt.Errorf("give -hosts, -nets or -ranges")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func create(dir, name string) (*os.File, *bufio.Writer, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, nil, err
	}
	return f, bufio.NewWriterSize(f, 1<<20), nil
}

func closeAll(f *os.File, w *bufio.Writer) error {
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func v4(u uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)})
}

// writeHosts: n distinct hosts in random order, and as many queries, each a random member or a random
// address (a hit only by chance, about 1 in 4,000 with 1M hosts).
func writeHosts(dir string, n, q int, rng *rand.Rand) error {
	seen := make(map[uint32]struct{}, n)
	list := make([]uint32, 0, n)
	for len(list) < n {
		u := rng.Uint32()
		if _, ok := seen[u]; ok {
			continue
		}
		seen[u] = struct{}{}
		list = append(list, u)
	}
	f, w, err := create(dir, "hosts.txt")
	if err != nil {
		return err
	}
	for _, u := range list {
		w.WriteString(v4(u).String())
		w.WriteByte('\n')
	}
	if err := closeAll(f, w); err != nil {
		return err
	}
	f, w, err = create(dir, "hosts-queries.txt")
	if err != nil {
		return err
	}
	for i := range q {
		u := rng.Uint32()
		if i%2 == 0 {
			u = list[rng.IntN(len(list))]
		}
		w.WriteString(v4(u).String())
		w.WriteByte('\n')
	}
	return closeAll(f, w)
}

// writeNetQueries: q queries, half inside a random net of the file, half random addresses of the same
// family, then every net's first and last address and the addresses just outside them.
func writeNetQueries(dir, name, path string, q int, rng *rand.Rand) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var pfx []netip.Prefix
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		p, err := netip.ParsePrefix(strings.Fields(line)[0])
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		pfx = append(pfx, p.Masked())
	}
	if len(pfx) == 0 {
		return fmt.Errorf("%s: no networks", path)
	}
	f, w, err := create(dir, name+"-queries.txt")
	if err != nil {
		return err
	}
	put := func(a netip.Addr) {
		if a.IsValid() {
			w.WriteString(a.String())
			w.WriteByte('\n')
		}
	}
	for i := range q {
		p := pfx[rng.IntN(len(pfx))]
		if i%2 == 0 {
			put(randomIn(p, rng))
		} else if p.Addr().Is4() {
			put(v4(rng.Uint32()))
		} else {
			put(random6(rng))
		}
	}
	for _, p := range pfx {
		lo, hi := p.Addr(), last(p)
		put(lo)
		put(hi)
		put(lo.Prev())
		put(hi.Next())
	}
	return closeAll(f, w)
}

func random6(rng *rand.Rand) netip.Addr {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[0] = 0x20 | b[0]&0x0f // mostly 2000::/4, where the v6 data lives
	return netip.AddrFrom16(b)
}

func randomIn(p netip.Prefix, rng *rand.Rand) netip.Addr {
	b := p.Addr().AsSlice()
	bits := p.Bits()
	for i := bits; i < len(b)*8; i++ {
		if rng.IntN(2) == 1 {
			b[i/8] |= 0x80 >> (i % 8)
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func last(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// writeRanges converts Tor's v4 geoip (decimal lo,hi,CC) into tor4.txt (lo-hi CC, dotted), the
// RESP of ZADD geo <hi> <lo,hi,CC> for Redis (a ZRANGEBYSCORE geo <ip> +inf LIMIT 0 1 finds the
// range), and queries: tor4-queries.txt (dotted, half inside a range) and tor4-ints.txt (the same
// queries as integers, for the ZSET side).
func writeRanges(dir, path string, q int, rng *rand.Rand) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	type rg struct{ lo, hi uint32 }
	var rs []rg
	f, w, err := create(dir, "tor4.txt")
	if err != nil {
		return err
	}
	fz, wz, err := create(dir, "tor4-zadd.resp")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		parts := strings.Split(line, ",")
		if len(parts) != 3 {
			return fmt.Errorf("%s: bad line %q", path, line)
		}
		lo, err1 := strconv.ParseUint(parts[0], 10, 32)
		hi, err2 := strconv.ParseUint(parts[1], 10, 32)
		if err1 != nil || err2 != nil || lo > hi {
			return fmt.Errorf("%s: bad line %q", path, line)
		}
		rs = append(rs, rg{uint32(lo), uint32(hi)})
		fmt.Fprintf(w, "%s-%s %s\n", v4(uint32(lo)), v4(uint32(hi)), parts[2])
		member := line
		fmt.Fprintf(wz, "*4\r\n$4\r\nZADD\r\n$3\r\ngeo\r\n$%d\r\n%d\r\n$%d\r\n%s\r\n", len(parts[1]), hi, len(member), member)
	}
	if err := closeAll(f, w); err != nil {
		return err
	}
	if err := closeAll(fz, wz); err != nil {
		return err
	}
	slices.SortFunc(rs, func(a, b rg) int { return int(int64(a.lo) - int64(b.lo)) })
	fq, wq, err := create(dir, "tor4-queries.txt")
	if err != nil {
		return err
	}
	fi, wi, err := create(dir, "tor4-ints.txt")
	if err != nil {
		return err
	}
	for i := range q {
		u := rng.Uint32()
		if i%2 == 0 {
			r := rs[rng.IntN(len(rs))]
			u = r.lo + uint32(rng.Uint64N(uint64(r.hi-r.lo)+1))
		}
		wq.WriteString(v4(u).String())
		wq.WriteByte('\n')
		wi.WriteString(strconv.FormatUint(uint64(u), 10))
		wi.WriteByte('\n')
	}
	if err := closeAll(fq, wq); err != nil {
		return err
	}
	return closeAll(fi, wi)
}

// writeZadd turns "prefix label" lines into the RESP of ZADD name <last address as an integer>
// "<prefix> <label>": the ZSET form of a range list that Redis users keep.
func writeZadd(dir, name, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, w, err := create(dir, name+"-zadd.resp")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		p, err := netip.ParsePrefix(strings.Fields(line)[0])
		if err != nil || !p.Addr().Is4() {
			return fmt.Errorf("%s: not an IPv4 prefix in %q", path, line)
		}
		b := last(p.Masked()).As4()
		score := strconv.FormatUint(uint64(b[0])<<24|uint64(b[1])<<16|uint64(b[2])<<8|uint64(b[3]), 10)
		fmt.Fprintf(w, "*4\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(name), name, len(score), score, len(line), line)
	}
	return closeAll(f, w)
}
