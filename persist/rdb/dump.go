package rdb

import (
	"encoding/binary"
	"errors"
)

// ErrDumpPayload is CheckDump's error: Redis answers RESTORE with
// "ERR DUMP payload version or checksum are wrong".
var ErrDumpPayload = errors.New("DUMP payload version or checksum are wrong")

// DumpPayload appends a DUMP payload: object (a type byte and a value, as the
// Encoder's value methods write after the key), the RDB version as 2 bytes
// little-endian, and the CRC64 of both, 8 bytes little-endian.
func DumpPayload(dst, object []byte, rdbVersion int) []byte {
	start := len(dst)
	dst = append(dst, object...)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(rdbVersion))
	return binary.LittleEndian.AppendUint64(dst, CRC64(0, dst[start:]))
}

// CheckDump verifies a DUMP payload as Redis's verifyDumpPayload does: at
// least 10 bytes, a version no newer than maxVersion, and a matching CRC64 (0
// is not special). It returns the object, a subslice of payload.
func CheckDump(payload []byte, maxVersion int) (object []byte, err error) {
	if len(payload) < 10 {
		return nil, ErrDumpPayload
	}
	foot := payload[len(payload)-10:]
	if int(binary.LittleEndian.Uint16(foot)) > maxVersion {
		return nil, ErrDumpPayload
	}
	if CRC64(0, payload[:len(payload)-8]) != binary.LittleEndian.Uint64(foot[2:]) {
		return nil, ErrDumpPayload
	}
	return payload[:len(payload)-10], nil
}

// DecodeObject decodes a DUMP object: a type byte and a value. As Redis's
// RESTORE, it ignores bytes after the value. (RESTORE reads a value that runs
// short on into the payload's 10-byte footer; given CheckDump's object, a
// value short by up to 10 bytes fails here where RESTORE may accept it.) Errors wrap ErrCorrupt (Redis
// answers "ERR Bad data format") or name an unsupported type. The Value's
// slices are its own, not object's.
func DecodeObject(object []byte) (Value, error) {
	d := Decoder{rd: reader{buf: object, end: len(object)}, version: MaxVersion, started: true}
	var v Value
	t, err := d.rd.byte()
	if err != nil {
		return v, err
	}
	if !validType(t) {
		return v, d.rd.corrupt(0, "unknown value type %d", t)
	}
	err = d.object(t, 0, &v)
	return v, err
}

// validType reports whether t is a value type byte Redis has defined.
func validType(t byte) bool {
	return t <= TypeStreamListpacks3 && t != 8
}
