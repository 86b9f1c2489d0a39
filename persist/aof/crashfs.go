package aof

import (
	"bytes"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
)

// CrashFS is an in-memory FS that models what an operating system crash keeps: per file, the
// bytes written and the bytes fsynced; per directory, the names as they are and as they were at
// the directory's last SyncDir. Crash drops every byte not synced and every create, rename and
// remove that no SyncDir of its directory followed. It also injects faults: a disk that holds
// only so many bytes (a write past it is short and fails with ENOSPC) and failing fsyncs.
//
// Safe for concurrent use.
type CrashFS struct {
	mu      sync.Mutex
	names   map[string]*inode // path -> file, as the running system sees it
	durable map[string]*inode // path -> file, as a crash would leave it
	dirs    map[string]bool
	used    int64
	space   int64 // bytes the disk holds in all; 0: unlimited
	syncErr error
	delay   time.Duration
	syncs   int64
}

type inode struct {
	data   []byte
	synced []byte
}

// NewCrashFS returns an empty CrashFS.
func NewCrashFS() *CrashFS {
	return &CrashFS{names: map[string]*inode{}, durable: map[string]*inode{}, dirs: map[string]bool{}}
}

// SetSpace limits the bytes all files may hold (0: no limit).
func (c *CrashFS) SetSpace(n int64) { c.mu.Lock(); c.space = n; c.mu.Unlock() }

// SetSyncErr makes every Sync fail with err (nil: Syncs succeed again); what it did not sync
// stays unsynced.
func (c *CrashFS) SetSyncErr(err error) { c.mu.Lock(); c.syncErr = err; c.mu.Unlock() }

// SetSyncDelay makes every Sync take d (a disk's latency), without holding the FS.
func (c *CrashFS) SetSyncDelay(d time.Duration) { c.mu.Lock(); c.delay = d; c.mu.Unlock() }

// CrashCopy returns, without touching c, a new CrashFS holding what a crash now would leave.
func (c *CrashFS) CrashCopy() *CrashFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := NewCrashFS()
	for d := range c.dirs {
		n.dirs[d] = true
	}
	for p, in := range c.durable {
		ni := &inode{data: bytes.Clone(in.synced), synced: bytes.Clone(in.synced)}
		n.names[p], n.durable[p] = ni, ni
		n.used += int64(len(ni.data))
	}
	return n
}

// Syncs counts the successful file Syncs so far.
func (c *CrashFS) Syncs() int64 { c.mu.Lock(); defer c.mu.Unlock(); return c.syncs }

// Crash drops every unsynced byte and every directory change not made durable by SyncDir.
// Files open before it keep working on the dropped state's inodes; tests reopen after a crash.
func (c *CrashFS) Crash() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = map[string]*inode{}
	c.used = 0
	for p, in := range c.durable {
		in.data = bytes.Clone(in.synced)
		c.names[p] = in
	}
	for _, in := range c.names {
		c.used += int64(len(in.data))
	}
}

// ReadFile returns a file's current bytes, for tests.
func (c *CrashFS) ReadFile(name string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.names[filepath.Clean(name)]
	if in == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(in.data), nil
}

// WriteFile sets a file's bytes and makes them and its name durable, for tests.
func (c *CrashFS) WriteFile(name string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name = filepath.Clean(name)
	in := c.names[name]
	if in == nil {
		in = &inode{}
	}
	c.used += int64(len(b) - len(in.data))
	in.data, in.synced = bytes.Clone(b), bytes.Clone(b)
	c.names[name], c.durable[name] = in, in
	c.dirs[filepath.Dir(name)] = true
}

type crashFile struct {
	c      *CrashFS
	in     *inode
	name   string
	closed bool
}

func (c *CrashFS) open(name string, trunc bool) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name = filepath.Clean(name)
	if !c.dirs[filepath.Dir(name)] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
	}
	in := c.names[name]
	if in == nil {
		in = &inode{}
		c.names[name] = in
	} else if trunc {
		c.used -= int64(len(in.data))
		in.data = nil
	}
	return &crashFile{c: c, in: in, name: name}, nil
}

func (c *CrashFS) Create(name string) (File, error)     { return c.open(name, true) }
func (c *CrashFS) OpenAppend(name string) (File, error) { return c.open(name, false) }

func (c *CrashFS) Open(name string) (io.ReadCloser, error) {
	b, err := c.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (c *CrashFS) Stat(name string) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.names[filepath.Clean(name)]
	if in == nil {
		return 0, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return int64(len(in.data)), nil
}

func (c *CrashFS) Rename(oldname, newname string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	in := c.names[oldname]
	if in == nil {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	if old := c.names[newname]; old != nil && old != in {
		c.used -= int64(len(old.data))
	}
	delete(c.names, oldname)
	c.names[newname] = in
	return nil
}

func (c *CrashFS) Remove(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	name = filepath.Clean(name)
	in := c.names[name]
	if in == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	c.used -= int64(len(in.data))
	delete(c.names, name)
	return nil
}

func (c *CrashFS) ReadDir(dir string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir = filepath.Clean(dir)
	if !c.dirs[dir] {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	var out []string
	for p := range c.names {
		if filepath.Dir(p) == dir {
			out = append(out, filepath.Base(p))
		}
	}
	sort.Strings(out)
	return out, nil
}

// MkdirAll makes directories at once durable (a simplification: the tests never crash between
// making a directory and syncing its parent).
func (c *CrashFS) MkdirAll(dir string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		c.dirs[d] = true
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// SyncDir makes the directory's current names what a crash keeps.
func (c *CrashFS) SyncDir(dir string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir = filepath.Clean(dir)
	if !c.dirs[dir] {
		return &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
	}
	for p := range c.durable {
		if filepath.Dir(p) == dir {
			delete(c.durable, p)
		}
	}
	for p, in := range c.names {
		if filepath.Dir(p) == dir {
			c.durable[p] = in
		}
	}
	return nil
}

func (f *crashFile) Write(p []byte) (int, error) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.closed {
		return 0, fs.ErrClosed
	}
	n := len(p)
	var err error
	if c.space > 0 && c.used+int64(n) > c.space {
		n = int(max(c.space-c.used, 0))
		err = &fs.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	f.in.data = append(f.in.data, p[:n]...)
	c.used += int64(n)
	return n, err
}

func (f *crashFile) Sync() error {
	c := f.c
	c.mu.Lock()
	n := len(f.in.data) // an fsync covers what was written before it began
	if d := c.delay; d > 0 {
		c.mu.Unlock()
		time.Sleep(d)
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	if c.syncErr != nil {
		return &fs.PathError{Op: "fdatasync", Path: f.name, Err: c.syncErr}
	}
	f.in.synced = bytes.Clone(f.in.data[:min(n, len(f.in.data))])
	c.syncs++
	return nil
}

func (f *crashFile) Truncate(size int64) error {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	if size < int64(len(f.in.data)) {
		c.used -= int64(len(f.in.data)) - size
		f.in.data = f.in.data[:size:size]
	}
	return nil
}

func (f *crashFile) Close() error {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	f.closed = true
	return nil
}
