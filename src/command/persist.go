package command

// WriteRDB: a point-in-time snapshot (snapshot.go) as a Redis 7.0.15 RDB stream (issue 17 item 1).
// The file layer (temp file, fsync, rename) and the save rules are src/server's.
//
// Layout, as rdbSaveRio writes it: "REDIS0010"; the aux fields redis-ver, redis-bits, ctime,
// used-mem, then repl-stream-db, repl-id, repl-offset when asked for, then aof-base; the function
// libraries (FUNCTION2 records, in name order); for every database with keys at the instant its
// SELECTDB and RESIZEDB with the instant's counts; then the snapshot's chunks, each beginning with
// a SELECTDB of its own (a repeated SELECTDB is valid, and RESIZEDB is only a hint to a loader);
// EOF and the CRC64 of everything before it (0 with rdbchecksum no).

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/persist/rdb"
)

// ReplInfo is the replication aux fields an RDB for a replica (or a restart that keeps the
// replication ID) carries.
type ReplInfo struct {
	StreamDB int
	ID       string
	Offset   int64
}

// RDBOptions configure WriteRDB.
type RDBOptions struct {
	Compress bool      // rdbcompression: LZF strings over 20 bytes that shrink
	Checksum bool      // rdbchecksum: CRC64 at the end (else 0)
	UsedMem  int64     // the used-mem aux field
	AOFBase  bool      // aof-base 1: the base of a multi-part AOF
	Repl     *ReplInfo // repl-stream-db, repl-id, repl-offset; nil: none
	// Instant, when set, is called once the snapshot's instant is fixed (not holding any token),
	// with the feed sequence number the image holds (entries up to it are in it, none after),
	// before anything is written. An error aborts the snapshot.
	Instant func(seq uint64) error
	// Progress, when set, is called after each chunk written, from WriteRDB's goroutine.
	Progress func(RDBProgress)
	// Redis70 writes only what redis-server 7.0 loads, for a replica without capa hotkv: keys
	// of HotKV's own types (vector sets, IP sets, LLM caches, agent memories, budgets: module
	// records Redis refuses, and exits on) are left out, counted in RDBStats.Skipped, and so is
	// the key tags' aux field.
	Redis70 bool
}

// RDBProgress is what a save reports as it goes.
type RDBProgress struct {
	Bytes int64 // written so far
	Keys  int64 // keys the instant held, in every database (expired ones not reclaimed included)
}

// RDBStats describe a finished save.
type RDBStats struct {
	Bytes    int64  // written
	Keys     int64  // key records written
	Expires  int64  // of them with an expiry
	Skipped  int64  // keys of HotKV's own types left out (RDBOptions.Redis70)
	Seq      uint64 // the feed sequence number the image holds
	Snapshot SnapshotStats
}

// WriteRDB writes a point-in-time image of every database to w as an RDB file of version 10. It
// must not be called holding a shard token; it refuses with ErrSnapshotRunning while another
// snapshot runs. ctx cancels it (the snapshot is aborted, hooks removed).
func (e *Engine) WriteRDB(ctx context.Context, w io.Writer, o RDBOptions) (RDBStats, error) {
	var st RDBStats
	now := time.Now()
	sers := make([]*RDBSerializer, len(e.Group.Shards))
	for i := range sers {
		sers[i] = e.newRDBSerializer(o.Compress, now)
		sers[i].redis70 = o.Redis70
	}
	sn, err := e.StartSnapshot(func(i int) Serializer { return sers[i] })
	if err != nil {
		return st, err
	}
	defer sn.Abort() // after the end only waits for the walk's goroutine
	st.Seq = sn.Seq()
	if o.Instant != nil {
		if err := o.Instant(st.Seq); err != nil {
			return st, err
		}
	}
	out := rdbWriter{w: w, sum: o.Checksum}
	var total int64
	for db := range e.dbCount {
		k, _ := sn.Keys(db)
		total += int64(k)
	}
	out.write(e.rdbPreamble(now, o, sn))
	for out.err == nil {
		chunk, err := sn.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		out.write(chunk)
		sn.Recycle(chunk)
		if o.Progress != nil {
			o.Progress(RDBProgress{Bytes: out.n, Keys: total})
		}
	}
	var aux rdb.Encoder
	if !o.Redis70 {
		appendTagsAux(&aux, sers) // HotKV's key tags, after the keys (persist_tags.go)
		appendHFEAux(&aux, sers)  // hash-field TTLs, which RDB 10 cannot hold (persist_hfe.go)
	}
	out.write(aux.Buf)
	if out.err != nil {
		return st, out.err
	}
	var end rdb.Encoder
	end.EOF(0)
	out.write(end.Buf[:1]) // the checksum covers the end opcode
	sum := out.crc
	if !o.Checksum {
		sum = 0
	}
	binary.LittleEndian.PutUint64(end.Buf[1:], sum)
	out.write(end.Buf[1:])
	if out.err != nil {
		return st, out.err
	}
	for _, s := range sers {
		st.Keys += s.keys
		st.Expires += s.expires
		st.Skipped += s.skipped
		if t := s.twin; t != nil { // the frozen large values (persist_freeze.go)
			st.Keys += t.keys
			st.Expires += t.expires
		}
	}
	st.Bytes, st.Snapshot = out.n, sn.Stats()
	return st, nil
}

// rdbPreamble is everything before the keys: header, aux fields, functions, and every non-empty
// database's SELECTDB and RESIZEDB.
func (e *Engine) rdbPreamble(now time.Time, o RDBOptions, sn *Snapshot) []byte {
	var enc rdb.Encoder
	enc.Compress = o.Compress
	enc.Header(rdb.Version)
	enc.Aux("redis-ver", RedisVersion)
	enc.Aux("redis-bits", "64")
	enc.Aux("ctime", strconv.FormatInt(now.Unix(), 10))
	enc.Aux("used-mem", strconv.FormatInt(o.UsedMem, 10))
	if r := o.Repl; r != nil {
		enc.Aux("repl-stream-db", strconv.Itoa(r.StreamDB))
		enc.Aux("repl-id", r.ID)
		enc.Aux("repl-offset", strconv.FormatInt(r.Offset, 10))
	}
	aofBase := "0"
	if o.AOFBase {
		aofBase = "1"
	}
	enc.Aux("aof-base", aofBase)
	if e.scriptsStarted() {
		for _, lib := range e.Scripts().FunctionList(nil) {
			enc.FunctionLib(lib.Code)
		}
	}
	for db := range e.dbCount {
		if k, x := sn.Keys(db); k > 0 {
			enc.SelectDB(db)
			enc.ResizeDB(k, x)
		}
	}
	return enc.Buf
}

// rdbWriter writes to w, counting bytes and keeping the CRC64 of everything written.
type rdbWriter struct {
	w   io.Writer
	sum bool
	crc uint64
	n   int64
	err error
}

func (r *rdbWriter) write(b []byte) {
	if r.err != nil || len(b) == 0 {
		return
	}
	if r.sum {
		r.crc = rdb.CRC64(r.crc, b)
	}
	n, err := r.w.Write(b)
	r.n += int64(n)
	if err != nil {
		r.err = fmt.Errorf("cannot write RDB: %w", err)
	}
}

// scriptsStarted reports whether the Lua engine exists (it starts on the first script or
// function): without it there is no library to save.
func (e *Engine) scriptsStarted() bool { return e.scripting.lua.Load() != nil }
