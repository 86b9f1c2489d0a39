package rdb

import "encoding/binary"

// crc64Poly is Redis's CRC-64 polynomial (Jones, 0xad93d23594c935a9) bit-reversed,
// since Redis's variant is reflected: initial value 0, no final xor.
const crc64Poly = 0x95ac9329ac4bc9b5

// crc64Tab holds slicing-by-8 tables: crc64Tab[0] is the plain byte table,
// crc64Tab[k][b] is the CRC of byte b followed by k zero bytes.
var crc64Tab = makeCRC64Tables()

func makeCRC64Tables() *[8][256]uint64 {
	t := new([8][256]uint64)
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ crc64Poly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}

// CRC64 extends crc with b using Redis's CRC-64 (crc64.c: crc64(0, "123456789") is
// 0xe9c6d914c4b8d9ca). RDB files end with the CRC64 of every byte before the
// checksum; DUMP payloads with the CRC64 of the object and its version footer.
func CRC64(crc uint64, b []byte) uint64 {
	t := crc64Tab
	for len(b) >= 8 {
		crc ^= binary.LittleEndian.Uint64(b)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
		b = b[8:]
	}
	for _, c := range b {
		crc = t[0][byte(crc)^c] ^ crc>>8
	}
	return crc
}
