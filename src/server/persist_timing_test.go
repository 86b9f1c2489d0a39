package server

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/persist/aof"
)

// countingFS is OSFS counting file fsyncs.
type countingFS struct {
	aof.OSFS
	mu    sync.Mutex
	syncs int64
}

type countingFile struct {
	aof.File
	fs *countingFS
}

func (c *countingFS) Create(name string) (aof.File, error) {
	f, err := c.OSFS.Create(name)
	return c.wrap(f, err)
}

func (c *countingFS) OpenAppend(name string) (aof.File, error) {
	f, err := c.OSFS.OpenAppend(name)
	return c.wrap(f, err)
}

func (c *countingFS) wrap(f aof.File, err error) (aof.File, error) {
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c}, nil
}

func (f *countingFile) Sync() error {
	f.fs.mu.Lock()
	f.fs.syncs++
	f.fs.mu.Unlock()
	return f.File.Sync()
}

// BenchmarkAOFSet is SET throughput at pipeline 30 from 50 clients (256-byte values, 100,000
// keys) under each appendfsync policy, on the real disk, with the fsyncs per second counted.
// One b.N is one SET.
func BenchmarkAOFSet(b *testing.B) {
	for _, policy := range []string{"off", "no", "everysec", "always"} {
		b.Run(policy, func(b *testing.B) { benchAOFSet(b, policy) })
	}
}

func benchAOFSet(b *testing.B, policy string) {
	const clients, depth = 50, 30
	args := []string{"--port", "0", "--save", ""}
	if policy != "off" {
		args = append(args, "--appendonly", "yes", "--appendfsync", policy)
	}
	t := &testing.T{}
	s := newTestServer(t, args...)
	logs := &syncBuffer{}
	s.log = slog.New(slog.NewTextHandler(logs, nil))
	s.dataDir = b.TempDir()
	fsys := &countingFS{}
	s.aof.fs = fsys
	if err := s.Listen(); err != nil {
		b.Fatal(err)
	}
	s.Start()
	defer s.Stop()
	<-s.Loaded()
	val := strings.Repeat("v", 256)
	per := b.N/clients + 1
	var wg sync.WaitGroup
	b.ResetTimer()
	t0 := time.Now()
	for i := range clients {
		conn, err := net.Dial("tcp", s.Addrs()[0].String())
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bufio.NewReaderSize(conn, 64<<10)
			var buf []byte
			for done := 0; done < per; done += depth {
				buf = buf[:0]
				for j := range depth {
					k := fmt.Sprintf("key:%d", (i*per+done+j)%100000)
					buf = fmt.Appendf(buf, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$256\r\n%s\r\n", len(k), k, val)
				}
				if _, err := conn.Write(buf); err != nil {
					return
				}
				for range depth {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	b.StopTimer()
	fsys.mu.Lock()
	syncs := fsys.syncs
	fsys.mu.Unlock()
	total := float64(per * clients)
	b.ReportMetric(total/el.Seconds(), "SET/s")
	b.ReportMetric(float64(syncs)/el.Seconds(), "fsync/s")
	b.ReportMetric(float64(strings.Count(logs.String(), "lost the write feed")), "feed-lost")
}

// BenchmarkBGSave1M fills a server with 1,000,000 keys of 256 bytes, then times BGSAVE to its
// end (the file written, fsynced and renamed) and a restart's load of that file. One b.N is
// one BGSAVE.
func BenchmarkBGSave1M(b *testing.B) {
	const keys = 1_000_000
	t := &testing.T{}
	dir := b.TempDir()
	s := newTestServer(t)
	s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	s.dataDir = dir
	if err := s.Listen(); err != nil {
		b.Fatal(err)
	}
	s.Start()
	defer s.Stop()
	conn, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 64<<10)
	val := strings.Repeat("v", 256)
	var buf []byte
	for i := 0; i < keys; i += 1000 {
		buf = buf[:0]
		for j := i; j < i+1000; j++ {
			k := fmt.Sprintf("key:%07d", j)
			buf = fmt.Appendf(buf, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$256\r\n%s\r\n", len(k), k, val)
		}
		conn.Write(buf)
		for range 1000 {
			if _, err := r.ReadString('\n'); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	var saveSec float64
	for range b.N {
		t0 := time.Now()
		if _, err := s.bgsave(false); err != nil {
			b.Fatal(err)
		}
		s.waitBgsave()
		for s.rdb.bg.Load() {
			time.Sleep(time.Millisecond)
		}
		saveSec += time.Since(t0).Seconds()
	}
	b.StopTimer()
	b.ReportMetric(saveSec/float64(b.N), "s/bgsave")
	b.ReportMetric(keys/(saveSec/float64(b.N)), "keys/s")
	s.Stop()
	s2 := newTestServer(t)
	s2.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	s2.dataDir = dir
	if err := s2.Listen(); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	s2.Start()
	defer s2.Stop()
	<-s2.Loaded()
	if err := s2.LoadErr(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(t0).Seconds(), "s/load")
	if n := s2.rdb.loadLoaded.Load(); n != keys {
		b.Fatalf("loaded %d keys of %d", n, keys)
	}
}
