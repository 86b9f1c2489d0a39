package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// windowSize is how much of the input the decoder buffers at a time.
const windowSize = 64 << 10

// ErrCorrupt is wrapped by every error about the content of a file or payload
// (as opposed to an I/O error of the reader).
var ErrCorrupt = errors.New("rdb: corrupt")

// reader is the decoder's input: a window over an io.Reader (or one byte
// slice), the file offset of the window, and the running CRC64 of every byte
// consumed before crcPos.
type reader struct {
	r      io.Reader
	buf    []byte
	pos    int
	end    int
	base   int64 // file offset of buf[0]
	crc    uint64
	crcPos int
	rerr   error // the io.Reader's sticky error
}

func (r *reader) offset() int64 { return r.base + int64(r.pos) }

// corrupt makes an error naming the offset where a problem was detected.
func (r *reader) corrupt(at int64, format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrCorrupt, at, fmt.Sprintf(format, args...))
}

// fill makes at least n (<= windowSize) bytes available, or fails.
func (r *reader) fill(n int) error {
	if r.end-r.pos >= n {
		return nil
	}
	if r.r == nil {
		return r.short()
	}
	if r.buf == nil {
		r.buf = make([]byte, windowSize)
	}
	r.crc = CRC64(r.crc, r.buf[r.crcPos:r.pos])
	copy(r.buf, r.buf[r.pos:r.end])
	r.base += int64(r.pos)
	r.end -= r.pos
	r.pos, r.crcPos = 0, 0
	for r.end < n {
		if r.rerr != nil {
			if r.rerr == io.EOF {
				return r.short()
			}
			return fmt.Errorf("rdb: cannot read at offset %d: %w", r.base+int64(r.end), r.rerr)
		}
		k, err := r.r.Read(r.buf[r.end:])
		r.end += k
		r.rerr = err
	}
	return nil
}

func (r *reader) short() error {
	return fmt.Errorf("%w at offset %d: %w", ErrCorrupt, r.base+int64(r.end), io.ErrUnexpectedEOF)
}

// sum is the CRC64 of everything consumed so far.
func (r *reader) sum() uint64 {
	r.crc = CRC64(r.crc, r.buf[r.crcPos:r.pos])
	r.crcPos = r.pos
	return r.crc
}

func (r *reader) byte() (byte, error) {
	if err := r.fill(1); err != nil {
		return 0, err
	}
	r.pos++
	return r.buf[r.pos-1], nil
}

// next returns the next n (<= windowSize) bytes, valid until the next read.
func (r *reader) next(n int) ([]byte, error) {
	if err := r.fill(n); err != nil {
		return nil, err
	}
	r.pos += n
	return r.buf[r.pos-n : r.pos], nil
}

func (r *reader) uint64LE() (uint64, error) {
	b, err := r.next(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// appendN appends the next n bytes to dst, growing dst only as bytes arrive,
// so a declared length the input does not hold costs nothing.
func (r *reader) appendN(dst []byte, n uint64) ([]byte, error) {
	for n > 0 {
		if r.pos == r.end {
			if err := r.fill(1); err != nil {
				return dst, err
			}
		}
		k := int(min(n, uint64(r.end-r.pos)))
		dst = append(dst, r.buf[r.pos:r.pos+k]...)
		r.pos += k
		n -= uint64(k)
	}
	return dst, nil
}

// length reads a length; encoded reports the special string encodings (0xc0-0xc3),
// whose kind is then returned as n.
func (r *reader) length() (n uint64, encoded bool, err error) {
	b, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3f), false, nil
	case 1:
		c, err := r.byte()
		return uint64(b&0x3f)<<8 | uint64(c), false, err
	case 3:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case 0x80:
		p, err := r.next(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case 0x81:
		p, err := r.next(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, r.corrupt(r.offset()-1, "unknown length encoding 0x%02x", b)
}

// len reads a plain length.
func (r *reader) len() (uint64, error) {
	at := r.offset()
	n, enc, err := r.length()
	if err == nil && enc {
		return 0, r.corrupt(at, "string encoding where a length belongs")
	}
	return n, err
}

// count reads a length that counts items, each of which takes at least one
// byte, as an int.
func (r *reader) count() (int, error) {
	at := r.offset()
	n, err := r.len()
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt32 {
		return 0, r.corrupt(at, "count %d too large", n)
	}
	return int(n), nil
}

// Kinds of string returned by str.
const (
	strRaw = iota
	strInt
	strLZF
)

// str appends a string (raw, integer-encoded or LZF) to dst; scratch holds the
// compressed bytes of an LZF string.
func (r *reader) str(dst []byte, scratch *[]byte) ([]byte, int, error) {
	at := r.offset()
	n, enc, err := r.length()
	if err != nil {
		return dst, 0, err
	}
	if !enc {
		dst, err = r.appendN(dst, n)
		return dst, strRaw, err
	}
	switch n {
	case 0, 1, 2:
		p, err := r.next(1 << n)
		if err != nil {
			return dst, 0, err
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
		return strconv.AppendInt(dst, v, 10), strInt, nil
	case 3:
		clen, err := r.len()
		if err != nil {
			return dst, 0, err
		}
		ulen, err := r.len()
		if err != nil {
			return dst, 0, err
		}
		*scratch, err = r.appendN((*scratch)[:0], clen)
		if err != nil {
			return dst, 0, err
		}
		if ulen > math.MaxInt32 {
			return dst, 0, r.corrupt(at, "LZF string of %d bytes", ulen)
		}
		dst, err = LZFDecompress(dst, *scratch, int(ulen))
		if err != nil {
			return dst, 0, r.corrupt(at, "%v", err)
		}
		return dst, strLZF, nil
	}
	return dst, 0, r.corrupt(at, "unknown string encoding %d", n)
}

// ms reads a millisecond time, 8 bytes little-endian.
func (r *reader) ms() (int64, error) {
	v, err := r.uint64LE()
	return int64(v), err
}
