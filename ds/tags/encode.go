package tags

import (
	"encoding/binary"
	"errors"
)

// The persisted form (the RDB aux field hotkv-tags, HotKV's own): a version byte, then for each
// tagged key: uvarint database, uvarint length and the key, uvarint tag count, then each tag as
// uvarint length and bytes. Redis ignores an aux field it does not know, so the file stays
// loadable by Redis.

// FormatVersion is the first byte of an encoding.
const FormatVersion = 1

// ErrFormat is returned for an encoding that is cut short or malformed.
var ErrFormat = errors.New("malformed key-tag record")

// AppendHeader starts an encoding.
func AppendHeader(dst []byte) []byte { return append(dst, FormatVersion) }

// AppendRecord appends key of database db with its tags.
func AppendRecord(dst []byte, db int, key string, tags []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(db))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.AppendUvarint(dst, uint64(len(tags)))
	for _, t := range tags {
		dst = binary.AppendUvarint(dst, uint64(len(t)))
		dst = append(dst, t...)
	}
	return dst
}

// Decode calls fn for every record of b, an encoding AppendHeader began. The key and tags alias
// b and are valid during the call. It stops at the first malformed record with ErrFormat, having
// called fn for the records before it; memory follows the bytes present, never a declared count.
func Decode(b []byte, fn func(db int, key []byte, tags [][]byte)) error {
	if len(b) == 0 || b[0] != FormatVersion {
		return ErrFormat
	}
	b = b[1:]
	var tags [][]byte
	for len(b) > 0 {
		db, n := binary.Uvarint(b)
		if n <= 0 || db > 1<<20 {
			return ErrFormat
		}
		b = b[n:]
		key, rest, ok := bytesField(b)
		if !ok {
			return ErrFormat
		}
		count, n := binary.Uvarint(rest)
		if n <= 0 {
			return ErrFormat
		}
		b = rest[n:]
		tags = tags[:0]
		for ; count > 0; count-- {
			var t []byte
			if t, b, ok = bytesField(b); !ok {
				return ErrFormat
			}
			tags = append(tags, t)
		}
		fn(int(db), key, tags)
	}
	return nil
}

// bytesField reads a uvarint length and that many bytes.
func bytesField(b []byte) (field, rest []byte, ok bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return nil, nil, false
	}
	b = b[n:]
	return b[:l], b[l:], true
}
