package aof

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// File is an AOF file open for writing. Write follows io.Writer (a short count comes with an
// error); Truncate cuts the file back to size bytes (Redis's ftruncate after a short write).
type File interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// FS is the file layer the package writes through: OSFS on a real disk, CrashFS in tests. Names
// are paths; every directory operation that must survive a crash is followed by SyncDir.
type FS interface {
	Create(name string) (File, error)     // create or truncate, for writing
	OpenAppend(name string) (File, error) // create if missing, writes go to the end
	Open(name string) (io.ReadCloser, error)
	Stat(name string) (size int64, err error) // fs.ErrNotExist when missing
	Rename(oldname, newname string) error
	Remove(name string) error
	ReadDir(dir string) ([]string, error) // sorted base names
	MkdirAll(dir string) error
	SyncDir(dir string) error
}

// OSFS is FS on the operating system's files.
type OSFS struct{}

type osFile struct{ f *os.File }

func (o osFile) Write(p []byte) (int, error)         { return o.f.Write(p) }
func (o osFile) Sync() error                         { return fdatasync(o.f) }
func (o osFile) Truncate(size int64) error           { return o.f.Truncate(size) }
func (o osFile) Close() error                        { return o.f.Close() }
func (OSFS) Open(name string) (io.ReadCloser, error) { return os.Open(name) }
func (OSFS) Rename(a, b string) error                { return os.Rename(a, b) }
func (OSFS) Remove(name string) error                { return os.Remove(name) }
func (OSFS) MkdirAll(dir string) error               { return os.MkdirAll(dir, 0o755) }

// fdatasync is what Redis's redis_fsync is on Linux: the data and the size, not the times.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

func (OSFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OSFS) OpenAppend(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OSFS) Stat(name string) (int64, error) {
	st, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (OSFS) ReadDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// exists reports whether name is there; an error other than "missing" counts as there, so that
// the caller's next open reports it.
func exists(fsys FS, name string) bool {
	_, err := fsys.Stat(name)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

func join(dir, name string) string { return filepath.Join(dir, name) }
