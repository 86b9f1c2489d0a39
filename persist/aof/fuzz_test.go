package aof

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the command-stream loader as the only INCR file: it never
// panics, what it applies is whole commands, and a truncation leaves a file that loads cleanly.
func FuzzLoad(f *testing.F) {
	f.Add(append(enc("SELECT", "1"), enc("SET", "k", "v")...), true)
	f.Add([]byte("*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"), true)
	f.Add([]byte("*2147483647\r\n$2147483648\r\nabc"), false)
	f.Add([]byte("#TS:1700000000\r\n*1\r\n$4\r\nPING\r\n"), true)
	f.Add([]byte("REDIS0010\xff"), true)
	f.Fuzz(func(t *testing.T, data []byte, truncated bool) {
		fsys := NewCrashFS()
		fsys.MkdirAll("/r/d")
		fsys.WriteFile("/r/d/appendonly.aof.manifest", []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"))
		fsys.WriteFile("/r/d/appendonly.aof.1.incr.aof", data)
		applied := 0
		load := func() (*LoadResult, error) {
			return Load(fsys, "/r/d", testFn, func(r io.Reader, isRDB bool) error {
				_, err := io.Copy(io.Discard, r)
				return err
			}, func(db int, argv [][]byte) error {
				if len(argv) == 0 || db < 0 {
					t.Fatalf("applied %d args in db %d", len(argv), db)
				}
				applied++
				return nil
			}, LoadOptions{Truncated: truncated})
		}
		res, err := load()
		var fe *FormatError
		if err != nil && !errors.Is(err, ErrTruncated) && !errors.As(err, &fe) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if err == nil && res.Truncated {
			cut, _ := fsys.ReadFile("/r/d/appendonly.aof.1.incr.aof")
			if !bytes.HasPrefix(data, cut) {
				t.Fatal("truncation is not a prefix")
			}
			first := applied
			applied = 0
			res2, err := load()
			if err != nil || res2.Truncated || applied != first {
				t.Fatalf("the truncated file reloads with %v, truncated=%v, %d vs %d commands", err, res2.Truncated, applied, first)
			}
		}
	})
}

// FuzzManifest: the manifest parser never panics, and what it accepts formats and parses back
// to the same thing (names that begin with a quote aside, as in Redis).
func FuzzManifest(f *testing.F) {
	f.Add([]byte("file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"))
	f.Add([]byte("file \"my \\\"x\\\" aof.2.base.rdb\" seq 2 type b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(bytes.NewReader(data))
		if err != nil {
			return
		}
		all := append(append([]Info(nil), m.History...), m.Incr...)
		if m.Base != nil {
			all = append(all, *m.Base)
		}
		if len(all) == 0 {
			return // comments only: formats as an empty file, which Redis refuses to load too
		}
		for _, i := range all {
			if len(i.Name) > 0 && (i.Name[0] == '\'' || bytes.ContainsAny([]byte(i.Name), "'")) {
				return
			}
		}
		back, err := ParseManifest(bytes.NewReader(m.Format()))
		if err != nil {
			if me, ok := err.(*ManifestError); ok && me.Msg == "The AOF manifest file contains too long line" {
				return
			}
			t.Fatalf("formatted manifest does not parse: %v\n%q", err, m.Format())
		}
		if !bytes.Equal(back.Format(), m.Format()) {
			t.Fatalf("round trip changed it:\n%q\n%q", m.Format(), back.Format())
		}
	})
}
