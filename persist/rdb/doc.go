// Package rdb reads and writes Redis's RDB format (versions 1 to 11; HotKV
// writes 10, Redis 7.0's) and DUMP payloads. It is pure: no I/O of its own
// beyond the io.Reader it decodes, no project imports.
//
// A file is "REDIS" and a four-digit version, then records, each an opcode
// byte or a value type byte:
//
//	250 AUX key value            248 IDLE len        249 FREQ byte
//	254 SELECTDB len             251 RESIZEDB len len
//	252 EXPIRETIME_MS 8 bytes LE 253 EXPIRETIME 4 bytes LE (seconds, old files)
//	245 FUNCTION2 code           247 MODULE_AUX (refused)
//	type key value               255 EOF, then the CRC64 of everything before it (v5+; 0: not computed)
//
// Lengths are 6 bits, 14 bits, or 0x80/0x81 and 32/64 bits big-endian;
// 0xc0-0xc2 mark strings stored as 8/16/32-bit integers, 0xc3 an LZF string
// (compressed length, length, data). Compact values (listpack, ziplist,
// intset, zipmap) are one string holding that structure; quicklists and
// streams are lists of such strings. A DUMP payload is a type byte and value,
// the version as 2 bytes LE and a CRC64 of both, 8 bytes LE.
//
// Invariants:
//
//  1. An Encoder keeps no state between calls but its options and scratch:
//     chunks encoded by separate Encoders concatenate into one valid file, in
//     the order they are joined. Within a key, the optional ExpireMs, Idle and
//     Freq records come before the value's type byte, as Redis writes them.
//     Redis never writes an empty collection (7.0 skips one on load, and
//     RESTORE refuses it); callers must not either.
//  2. Encoding allocates nothing per key once an Encoder's buffers have grown
//     (BenchmarkEncodeStrings); the caller owns Buf and may reset it.
//  3. The checksum is the caller's: CRC64 over the concatenated chunks, passed
//     to EOF. The Decoder checks it when it is not 0.
//  4. Decoding allocates in proportion to the bytes actually read: strings
//     grow as their bytes arrive, counts never size a make, LZF output is
//     bounded by what its input can expand to. A length of 2^40 in a short
//     file fails with ErrCorrupt, it is never allocated.
//  5. Every decoding error about content wraps ErrCorrupt and names the file
//     (or object) offset where it was detected; nothing the input holds can
//     panic the decoder (FuzzDecoder, FuzzDecodeObject).
//  6. A Record and its Value are reused by the next Next; their slices stay
//     valid until then. DecodeObject's Value is the caller's to keep.
//  7. A collection's elements keep their on-disk order: lists in order, sorted
//     sets in the file's order (score order in listpacks, any in ZSET_2),
//     streams by ID; only live stream entries are returned.
package rdb
