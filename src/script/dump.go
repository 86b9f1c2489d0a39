package script

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/persist/rdb"
)

// FUNCTION DUMP and FUNCTION RESTORE payloads, Redis 7.0's format: for each library the byte
// RDB_OPCODE_FUNCTION2 (245) and its code as an RDB string, then the RDB version (10) in two
// bytes and a CRC-64 (Jones) of everything before, both little-endian: persist/rdb's codec
// writes and reads it. DUMP writes the code uncompressed; Redis compresses code it can shrink
// with LZF, and RESTORE reads either, so a payload moves both ways between Redis 7.0 and HotKV.

const (
	rdbOpFunction2   = 245
	rdbOpFunctionPre = 246 // Redis 7.0 release candidates
	rdbVersion       = rdb.Version
	errDumpPayload   = "ERR DUMP payload version or checksum are wrong"
	errRestorePolicy = "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
)

// RestorePolicy is FUNCTION RESTORE's last argument.
type RestorePolicy uint8

const (
	RestoreAppend  RestorePolicy = iota // the default: a library that exists fails the restore
	RestoreFlush                        // drop every library first
	RestoreReplace                      // libraries of the same name are replaced
)

// ParseRestorePolicy reads FLUSH, APPEND or REPLACE (any case); errReply is Redis's text.
func ParseRestorePolicy(arg []byte) (p RestorePolicy, errReply string) {
	switch {
	case strs.EqualFold(arg, "append"):
		return RestoreAppend, ""
	case strs.EqualFold(arg, "flush"):
		return RestoreFlush, ""
	case strs.EqualFold(arg, "replace"):
		return RestoreReplace, ""
	}
	return 0, errRestorePolicy
}

// FunctionDump is FUNCTION DUMP's payload: every library, in name order.
func (e *Engine) FunctionDump() []byte {
	var enc rdb.Encoder // Compress off: the code goes uncompressed
	for _, lib := range e.FunctionList(nil) {
		enc.FunctionLib(lib.Code)
	}
	return rdb.DumpPayload(nil, enc.Buf, rdbVersion)
}

// FunctionRestore is FUNCTION RESTORE payload [policy]: it loads every library of the payload
// (as FUNCTION LOAD would) and registers them all, or none, by policy. h receives the loads'
// redis.log lines; it may be nil.
func (e *Engine) FunctionRestore(h Host, payload []byte, policy RestorePolicy) string {
	body, err := rdb.CheckDump(payload, rdbVersion) // Redis's verifyDumpPayload
	if err != nil {
		return errDumpPayload
	}
	// The records are read by persist/rdb's decoder behind a file header; each opcode is
	// checked here first, for Redis's errors.
	file := append([]byte(fmt.Sprintf("REDIS%04d", rdbVersion)), body...)
	d := rdb.NewDecoderBytes(file)
	var libs []*Library
	for pos := 0; pos < len(body); pos = int(d.Offset()) - (len(file) - len(body)) {
		switch body[pos] {
		case rdbOpFunction2:
		case rdbOpFunctionPre:
			return "ERR Pre-GA function format not supported"
		default:
			return "ERR given type is not a function"
		}
		rec, err := d.Next()
		if err != nil || rec.Kind != rdb.RecFunction {
			return "ERR Failed loading library payload"
		}
		lib, errReply := e.compileLibrary(h, bytes.Clone(rec.Code))
		if errReply != "" {
			return errReply
		}
		libs = append(libs, lib)
	}
	return e.libs.restore(libs, policy)
}

// restore registers libs by policy, all or none. With several colliding libraries the one named
// is the first in the payload (Redis names the first in its hash order).
func (l *libraries) restore(libs []*Library, policy RestorePolicy) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	base := l.cur.Load()
	if policy == RestoreFlush {
		base = &libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}}
	}
	next := base.clone()
	for _, lib := range libs {
		if prev, ok := next.libs[lib.Name]; ok {
			if policy != RestoreReplace {
				return "ERR Library " + lib.Name + " already exists"
			}
			next.remove(prev)
		}
	}
	for _, lib := range libs {
		for _, f := range lib.Functions {
			if _, ok := next.funcs[strings.ToLower(f.Name)]; ok {
				return "ERR Function " + f.Name + " already exists"
			}
		}
		if _, dup := next.libs[lib.Name]; dup {
			return "ERR Library " + lib.Name + " already exists"
		}
		next.libs[lib.Name] = lib
		for _, f := range lib.Functions {
			f.Library = lib
			next.funcs[strings.ToLower(f.Name)] = f
		}
	}
	l.cur.Store(next)
	l.gen.Add(1)
	return ""
}
