package cluster

import "unsafe"

// Slots is the number of hash slots.
const Slots = 16384

// crcTable is CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection), the checksum Redis
// Cluster hashes keys with, built at init from the polynomial.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// CRC16 is CRC-16/XMODEM of b.
func CRC16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crcTable[byte(c>>8)^x]
	}
	return c
}

// KeySlot is the hash slot of key, as Redis's keyHashSlot: when the key has a '{' followed later by a
// '}' with at least one byte between them, only the bytes between the first '{' and the first '}'
// after it are hashed; otherwise the whole key.
func KeySlot(key []byte) int {
	for i, c := range key {
		if c != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					break
				}
				return int(CRC16(key[i+1:j]) & (Slots - 1))
			}
		}
		break
	}
	return int(CRC16(key) & (Slots - 1))
}

// KeySlotString is KeySlot of a key held as a string (a keyspace entry's), without copying it.
func KeySlotString(key string) int {
	return KeySlot(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// SlotOpen is the state of a slot in resharding as the command route sees it.
type SlotOpen uint8

const (
	SlotStable    SlotOpen = iota
	SlotMigrating          // served here while the keys are here; a missing key is -ASK
	SlotImporting          // an ASKING client's command: -TRYAGAIN when several keys, some missing
)

// KeyCounts are database 0's key counts the CLUSTER command's checks need (SETSLOT NODE, RESET,
// REPLICATE): Slot's keys when the command names a slot (else Slot is -1), and the total.
type KeyCounts struct {
	Slot, InSlot, Total int
}
