// Package wire is the Redis Cluster bus codec: Redis 7.0's clusterMsg, byte for byte.
//
// A message is a 2256-byte header followed by a body whose length the type fixes (see Decode). All
// integers are big-endian. The layout is Redis's (src/cluster.h of 7.0), written from its documented
// field order and sizes:
//
//	off  size field
//	0    4    signature "RCmb"
//	4    4    totlen (whole message)
//	8    2    version (1)
//	10   2    port (client port)
//	12   2    type
//	14   2    count (gossip entries of PING/PONG/MEET)
//	16   8    currentEpoch
//	24   8    configEpoch (the sender's, or its master's when it is a replica)
//	32   8    replication offset
//	40   40   sender node name
//	80   2048 slots bitmap of the sender (or its master)
//	2128 40   slaveof (all zero bytes for a master)
//	2168 46   sender IP (zero unless announced)
//	2214 2    number of ping extensions
//	2216 30   unused
//	2246 2    pport (plaintext port under TLS)
//	2248 2    cport (bus port)
//	2250 2    node flags
//	2252 1    cluster state (0 ok, 1 fail)
//	2253 3    message flags
//
// The package is pure: no I/O, no clock. Decode never allocates by a length the peer declares beyond
// the bytes it was given, and rejects every packet Redis 7.0 drops (wrong version, wrong length for its
// type, misaligned or overlong extensions). Unknown message types decode with their header and the
// body kept raw, as Redis reads the header of any type; unknown extension types are kept and ignored.
package wire

import (
	"encoding/binary"
	"errors"
)

// Sizes and constants of the 7.0 bus.
const (
	Signature   = "RCmb"
	Version     = 1
	HeaderLen   = 2256 // sizeof(clusterMsg) minus its data union; also the smallest valid totlen
	GossipLen   = 104
	NameLen     = 40
	IPLen       = 46
	Slots       = 16384
	SlotsBytes  = Slots / 8
	FailLen     = NameLen
	UpdateLen   = 8 + NameLen + SlotsBytes
	publishHead = 8  // channel_len, message_len
	moduleHead  = 13 // module_id, len, type
	extHead     = 8  // length, type, unused
	// MaxLen bounds a frame a link accepts. Redis has no bound but its own buffer growth; a PUBLISH
	// larger than this is refused on our side only (Redis's default client limits are far lower).
	MaxLen = 1 << 30
)

// Type is a message type.
type Type uint16

// The 11 message types of Redis 7.0.
const (
	Ping Type = iota
	Pong
	Meet
	Fail
	Publish
	FailoverAuthRequest
	FailoverAuthAck
	Update
	MFStart
	Module
	PublishShard
	TypeCount
)

var typeNames = [...]string{"ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack",
	"update", "mfstart", "module", "publishshard"}

// String is the type's name as Redis's CLUSTER INFO stats print it (cluster_stats_messages_<name>_sent).
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown"
}

// Message flags (mflags[0]).
const (
	MFlagPaused   = 1 << 0
	MFlagForceAck = 1 << 1
	MFlagExtData  = 1 << 2
)

// Node flags as they travel in the header and in gossip entries.
const (
	NodeMaster     = 1 << 0
	NodeSlave      = 1 << 1
	NodePFail      = 1 << 2
	NodeFail       = 1 << 3
	NodeMyself     = 1 << 4
	NodeHandshake  = 1 << 5
	NodeNoAddr     = 1 << 6
	NodeMeet       = 1 << 7
	NodeMigrateTo  = 1 << 8
	NodeNoFailover = 1 << 9
)

// ExtHostname is the one extension type Redis 7.0 sends (only when cluster-announce-hostname is set).
const ExtHostname = 0

// Header is the fixed part of every message. Unused fields are kept so a decoded message re-encodes to
// the same bytes.
type Header struct {
	Type         Type
	Count        uint16 // raw count for non-gossip types; Encode writes len(Gossip) for PING/PONG/MEET
	Port         uint16
	CurrentEpoch uint64
	ConfigEpoch  uint64
	Offset       uint64
	Sender       [NameLen]byte
	MySlots      [SlotsBytes]byte
	SlaveOf      [NameLen]byte
	MyIP         [IPLen]byte
	Extensions   uint16 // raw; Encode writes len(Exts) when MFlagExtData is set
	Unused       [30]byte
	PPort        uint16
	CPort        uint16
	Flags        uint16
	State        uint8
	MFlags       [3]byte
}

// Gossip is one 104-byte entry about another node in PING, PONG and MEET.
type Gossip struct {
	Name         [NameLen]byte
	PingSent     uint32 // seconds
	PongReceived uint32 // seconds
	IP           [IPLen]byte
	Port         uint16
	CPort        uint16
	Flags        uint16
	PPort        uint16
	Unused       uint16
}

// Ext is one ping extension. Data is the payload after the 8-byte extension header, padding included
// (its length is a multiple of 8).
type Ext struct {
	Type   uint16
	Unused uint16
	Data   []byte
}

// Msg is one decoded message. Which body fields are set depends on Type; slices alias the decoded
// buffer (copy them to keep them past the buffer's life).
type Msg struct {
	Header
	Gossip []Gossip // PING, PONG, MEET
	Exts   []Ext    // PING, PONG, MEET with MFlagExtData

	FailName [NameLen]byte // FAIL: the node now failing

	Channel, Message []byte // PUBLISH, PUBLISHSHARD

	UpdateEpoch uint64 // UPDATE: the configEpoch of UpdateName
	UpdateName  [NameLen]byte
	UpdateSlots [SlotsBytes]byte

	ModuleID   uint64 // MODULE
	ModuleType uint8
	Payload    []byte // MODULE payload

	Raw []byte // unknown types: the body after the header, as received
}

// Errors of Decode and Frame. A link closes on ErrSignature (as Redis frees the link on a bad signature
// or a length under the header's); every other error drops the one packet.
var (
	ErrShort     = errors.New("cluster bus: incomplete message")
	ErrSignature = errors.New("cluster bus: bad message length or signature")
	ErrVersion   = errors.New("cluster bus: unsupported protocol version")
	ErrLength    = errors.New("cluster bus: message length does not match its type")
	ErrExt       = errors.New("cluster bus: malformed ping extension")
)

// Frame reports the length of the message at the start of b: 0 and ErrShort until 8 bytes are there,
// ErrSignature for a stream that is not the bus (the link must close), else totlen, which may exceed
// len(b) (read more; it is at most MaxLen).
func Frame(b []byte) (int, error) {
	if len(b) < 8 {
		return 0, ErrShort
	}
	n := binary.BigEndian.Uint32(b[4:8])
	if string(b[:4]) != Signature || n < HeaderLen || n > MaxLen {
		return 0, ErrSignature
	}
	return int(n), nil
}

// IsGossipType reports whether t carries gossip entries and extensions.
func IsGossipType(t Type) bool { return t == Ping || t == Pong || t == Meet }

// Name returns a node name field as a string (a zero name gives "").
func Name(n *[NameLen]byte) string {
	for _, c := range n {
		if c != 0 {
			return string(n[:])
		}
	}
	return ""
}

// CString returns a NUL-terminated field up to its first NUL.
func CString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// SetCString fills dst with s, NUL-padded (truncated to leave a NUL at the end).
func SetCString(dst []byte, s string) {
	clear(dst)
	if len(s) > len(dst)-1 {
		s = s[:len(dst)-1]
	}
	copy(dst, s)
}

// SlotSet reports whether the bitmap has slot set (bit slot&7 of byte slot/8, as Redis's bitmap).
func SlotSet(bm *[SlotsBytes]byte, slot int) bool { return bm[slot>>3]&(1<<(slot&7)) != 0 }

// SetSlot sets or clears slot in bm.
func SetSlot(bm *[SlotsBytes]byte, slot int, on bool) {
	if on {
		bm[slot>>3] |= 1 << (slot & 7)
	} else {
		bm[slot>>3] &^= 1 << (slot & 7)
	}
}

// Hostname returns the hostname extension's value, or "" when m has none.
func (m *Msg) Hostname() string {
	for _, e := range m.Exts {
		if e.Type == ExtHostname {
			return CString(e.Data)
		}
	}
	return ""
}

// HostnameExt builds the hostname extension as Redis 7.0 pads it: the name, a NUL, zeros to 8 bytes.
func HostnameExt(host string) Ext {
	n := (len(host) + 1 + 7) &^ 7
	d := make([]byte, n)
	copy(d, host)
	return Ext{Type: ExtHostname, Data: d}
}
