package rdbcheck

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/hotkv/hotkv/persist/rdb"
)

// typeNames are the RDB type bytes' names, as Redis's check reports them (in our spelling).
var typeNames = map[byte]string{
	rdb.TypeString: "string", rdb.TypeList: "list", rdb.TypeSet: "set", rdb.TypeZSet: "zset",
	rdb.TypeHash: "hash", rdb.TypeZSet2: "zset-2", rdb.TypeModulePreGA: "module-pre-ga",
	rdb.TypeModule2: "module-2", rdb.TypeHashZipmap: "hash-zipmap", rdb.TypeListZiplist: "list-ziplist",
	rdb.TypeSetIntset: "set-intset", rdb.TypeZSetZiplist: "zset-ziplist", rdb.TypeHashZiplist: "hash-ziplist",
	rdb.TypeListQuicklist: "list-quicklist", rdb.TypeStreamListpacks: "stream-listpacks",
	rdb.TypeHashListpack: "hash-listpack", rdb.TypeZSetListpack: "zset-listpack",
	rdb.TypeListQuicklist2: "list-quicklist-2", rdb.TypeStreamListpacks2: "stream-listpacks-2",
	rdb.TypeSetListpack: "set-listpack", rdb.TypeStreamListpacks3: "stream-listpacks-3",
}

// pendingWindow is how much of the failed record pendingKey looks at.
const pendingWindow = 64 << 10

// pendingKey reads the header of the record that starts at off (where the
// last whole record ended): when it is a key whose type byte and name are
// within the file, it returns them (the key cut to 200 bytes). This is the key
// redis-check-rdb names as "Reading key" when the error is inside its value.
func pendingKey(ra io.ReaderAt, off, size int64) (key string, typ byte, ok bool) {
	buf := make([]byte, min(pendingWindow, max(size-off, 0)))
	n, _ := ra.ReadAt(buf, off)
	h := header{b: buf[:n]}
	for {
		op, good := h.byte()
		if !good {
			return "", 0, false
		}
		switch op {
		case rdb.OpExpireMs:
			h.skip(8)
		case rdb.OpExpire:
			h.skip(4)
		case rdb.OpFreq:
			h.skip(1)
		case rdb.OpIdle:
			h.length()
		default:
			if _, known := typeNames[op]; !known {
				return "", 0, false
			}
			k, good := h.str()
			if !good {
				return "", 0, false
			}
			if len(k) > 200 {
				k = append(k[:200:200], "..."...)
			}
			return string(k), op, true
		}
		if h.bad {
			return "", 0, false
		}
	}
}

// header reads RDB lengths and strings from a byte slice; bad latches.
type header struct {
	b   []byte
	bad bool
}

func (h *header) byte() (byte, bool) {
	if h.bad || len(h.b) == 0 {
		h.bad = true
		return 0, false
	}
	c := h.b[0]
	h.b = h.b[1:]
	return c, true
}

func (h *header) skip(n int) []byte {
	if h.bad || len(h.b) < n {
		h.bad = true
		return nil
	}
	s := h.b[:n]
	h.b = h.b[n:]
	return s
}

// length reads an RDB length; enc reports the special string encodings (0xc0-0xc3).
func (h *header) length() (n uint64, enc bool) {
	c, ok := h.byte()
	if !ok {
		return 0, false
	}
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), false
	case 1:
		d, _ := h.byte()
		return uint64(c&0x3f)<<8 | uint64(d), false
	case 3:
		return uint64(c & 0x3f), true
	}
	switch c {
	case 0x80:
		if p := h.skip(4); p != nil {
			return uint64(binary.BigEndian.Uint32(p)), false
		}
	case 0x81:
		if p := h.skip(8); p != nil {
			return binary.BigEndian.Uint64(p), false
		}
	default:
		h.bad = true
	}
	return 0, false
}

// str reads a string: raw, an integer, or LZF (decompressed when it fits the window).
func (h *header) str() ([]byte, bool) {
	n, enc := h.length()
	if h.bad {
		return nil, false
	}
	if !enc {
		if n > uint64(len(h.b)) {
			return nil, false
		}
		return h.skip(int(n)), true
	}
	switch n {
	case 0, 1, 2:
		p := h.skip(1 << n)
		if p == nil {
			return nil, false
		}
		var v int64
		switch n {
		case 0:
			v = int64(int8(p[0]))
		case 1:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		return fmt.Appendf(nil, "%d", v), true
	case 3:
		clen, _ := h.length()
		ulen, _ := h.length()
		if h.bad || clen > uint64(len(h.b)) || ulen > pendingWindow {
			return nil, false
		}
		out, err := rdb.LZFDecompress(nil, h.skip(int(clen)), int(ulen))
		return out, err == nil
	}
	return nil, false
}
