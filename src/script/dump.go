package script

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/ds/strs"
)

// FUNCTION DUMP and FUNCTION RESTORE payloads, Redis 7.0's format: for each library the byte
// RDB_OPCODE_FUNCTION2 (245) and its code as an RDB string, then the RDB version (10) in two
// bytes and a CRC-64 (Jones) of everything before, both little-endian. DUMP writes the code
// uncompressed; Redis compresses code it can shrink with LZF, and RESTORE reads either, so a
// payload moves both ways between Redis 7.0 and HotKV.

const (
	rdbOpFunction2   = 245
	rdbOpFunctionPre = 246 // Redis 7.0 release candidates
	rdbVersion       = 10
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
	var out []byte
	for _, lib := range e.FunctionList(nil) {
		out = append(out, rdbOpFunction2)
		out = appendRDBLen(out, uint64(len(lib.Code)))
		out = append(out, lib.Code...)
	}
	out = binary.LittleEndian.AppendUint16(out, rdbVersion)
	return binary.LittleEndian.AppendUint64(out, crc64Jones(0, out))
}

// FunctionRestore is FUNCTION RESTORE payload [policy]: it loads every library of the payload
// (as FUNCTION LOAD would) and registers them all, or none, by policy. h receives the loads'
// redis.log lines; it may be nil.
func (e *Engine) FunctionRestore(h Host, payload []byte, policy RestorePolicy) string {
	if !validDump(payload) {
		return errDumpPayload
	}
	body := payload[:len(payload)-10]
	var libs []*Library
	for len(body) > 0 {
		op := body[0]
		body = body[1:]
		switch op {
		case rdbOpFunction2:
		case rdbOpFunctionPre:
			return "ERR Pre-GA function format not supported"
		default:
			return "ERR given type is not a function"
		}
		code, rest, ok := readRDBString(body)
		if !ok {
			return "ERR Failed loading library payload"
		}
		body = rest
		lib, errReply := e.compileLibrary(h, code)
		if errReply != "" {
			return errReply
		}
		libs = append(libs, lib)
	}
	return e.libs.restore(libs, policy)
}

// validDump is Redis's verifyDumpPayload: a version we read and a matching checksum.
func validDump(p []byte) bool {
	if len(p) < 10 {
		return false
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion {
		return false
	}
	return binary.LittleEndian.Uint64(footer[2:]) == crc64Jones(0, p[:len(p)-8])
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

// appendRDBLen is rdbSaveLen.
func appendRDBLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, 0x40|byte(n>>8), byte(n))
	case n <= 1<<32-1:
		return binary.BigEndian.AppendUint32(append(dst, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0x81), n)
}

// readRDBLen is rdbLoadLen; enc reports the special encodings (0xC0 | type).
func readRDBLen(b []byte) (n uint64, enc int, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, -1, nil, false
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3F), -1, b[1:], true
	case 1:
		if len(b) < 2 {
			return 0, -1, nil, false
		}
		return uint64(b[0]&0x3F)<<8 | uint64(b[1]), -1, b[2:], true
	case 3:
		return 0, int(b[0] & 0x3F), b[1:], true
	}
	switch b[0] {
	case 0x80:
		if len(b) < 5 {
			return 0, -1, nil, false
		}
		return uint64(binary.BigEndian.Uint32(b[1:])), -1, b[5:], true
	case 0x81:
		if len(b) < 9 {
			return 0, -1, nil, false
		}
		return binary.BigEndian.Uint64(b[1:]), -1, b[9:], true
	}
	return 0, -1, nil, false
}

// readRDBString is rdbGenericLoadStringObject: a plain, integer-encoded or LZF string.
func readRDBString(b []byte) (s []byte, rest []byte, ok bool) {
	n, enc, b, ok := readRDBLen(b)
	if !ok {
		return nil, nil, false
	}
	switch enc {
	case -1:
		if n > uint64(len(b)) {
			return nil, nil, false
		}
		return b[:n], b[n:], true
	case 0, 1, 2: // 8, 16, 32-bit integers, little-endian
		size := 1 << enc
		if len(b) < size {
			return nil, nil, false
		}
		var v int64
		switch enc {
		case 0:
			v = int64(int8(b[0]))
		case 1:
			v = int64(int16(binary.LittleEndian.Uint16(b)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		}
		return strconv.AppendInt(nil, v, 10), b[size:], true
	case 3:
		clen, _, b, ok1 := readRDBLen(b)
		ulen, _, b, ok2 := readRDBLen(b)
		if !ok1 || !ok2 || clen > uint64(len(b)) {
			return nil, nil, false
		}
		out, ok := lzfDecompress(b[:clen], ulen)
		return out, b[clen:], ok
	}
	return nil, nil, false
}

// lzfDecompress is liblzf's lzf_decompress. Output grows with what the input produces, up to the
// declared length, never allocated from the declaration alone.
func lzfDecompress(in []byte, want uint64) ([]byte, bool) {
	var out []byte
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			n := ctrl + 1
			if i+n > len(in) || uint64(len(out)+n) > want {
				return nil, false
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		back := (ctrl & 0x1F) << 8
		if n == 7 {
			if i >= len(in) {
				return nil, false
			}
			n += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		back += int(in[i]) + 1
		i++
		n += 2
		ref := len(out) - back
		if ref < 0 || uint64(len(out)+n) > want {
			return nil, false
		}
		for k := 0; k < n; k++ { // may overlap what it writes
			out = append(out, out[ref+k])
		}
	}
	return out, uint64(len(out)) == want
}

// crc64Jones is Redis's crc64: reflected, polynomial 0xad93d23594c935a9, no initial or final xor.
func crc64Jones(crc uint64, b []byte) uint64 {
	for _, c := range b {
		crc = crc64Table[byte(crc)^c] ^ crc>>8
	}
	return crc
}

var crc64Table = func() (t [256]uint64) {
	poly := bits.Reverse64(0xad93d23594c935a9)
	for i := range t {
		c := uint64(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()
