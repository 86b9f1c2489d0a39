package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

func randName(r *rand.Rand) (n [NameLen]byte) {
	const hex = "0123456789abcdef"
	for i := range n {
		n[i] = hex[r.IntN(16)]
	}
	return n
}

func randHeader(r *rand.Rand, t Type) Header {
	h := Header{Type: t, Port: uint16(r.Uint32()), CurrentEpoch: r.Uint64(), ConfigEpoch: r.Uint64(),
		Offset: r.Uint64(), Sender: randName(r), PPort: uint16(r.Uint32()), CPort: uint16(r.Uint32()),
		Flags: uint16(r.Uint32()), State: uint8(r.IntN(2))}
	for range 50 {
		SetSlot(&h.MySlots, r.IntN(Slots), true)
	}
	if r.IntN(2) == 0 {
		h.SlaveOf = randName(r)
	}
	SetCString(h.MyIP[:], "127.0.0.1")
	return h
}

func randMsg(r *rand.Rand, t Type) *Msg {
	m := &Msg{Header: randHeader(r, t)}
	switch t {
	case Ping, Pong, Meet:
		for range r.IntN(5) {
			g := Gossip{Name: randName(r), PingSent: r.Uint32(), PongReceived: r.Uint32(),
				Port: uint16(r.Uint32()), CPort: uint16(r.Uint32()), Flags: uint16(r.Uint32())}
			SetCString(g.IP[:], "10.0.0.1")
			m.Gossip = append(m.Gossip, g)
		}
		if r.IntN(2) == 0 {
			m.Exts = append(m.Exts, HostnameExt("node-a.example"), Ext{Type: 77, Data: make([]byte, 16)})
		}
	case Fail:
		m.FailName = randName(r)
	case Publish, PublishShard:
		m.Channel, m.Message = []byte("news"), bytes.Repeat([]byte{'x'}, r.IntN(300))
	case Update:
		m.UpdateEpoch, m.UpdateName = r.Uint64(), randName(r)
		SetSlot(&m.UpdateSlots, r.IntN(Slots), true)
	case Module:
		m.ModuleID, m.ModuleType, m.Payload = r.Uint64(), uint8(r.Uint32()), []byte("payload")
	case TypeCount + 3:
		m.Raw = []byte("whatever a newer node sends")
	}
	return m
}

// normalize gives what Decode yields for the fields Encode derives, so randMsg values compare.
func normalize(m *Msg) {
	if IsGossipType(m.Type) {
		m.Count = uint16(len(m.Gossip))
		if len(m.Exts) > 0 {
			m.MFlags[0] |= MFlagExtData
			m.Extensions = uint16(len(m.Exts))
		}
	}
	for _, p := range []*[]byte{&m.Channel, &m.Message, &m.Payload, &m.Raw} {
		if *p != nil && len(*p) == 0 {
			*p = nil
		}
	}
}

func TestRoundTripEveryType(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for ty := Ping; ty <= TypeCount+3; ty++ {
		for range 20 {
			m := randMsg(r, ty)
			b := Encode(nil, m)
			if len(b) != Len(m) {
				t.Fatalf("%v: encoded %d bytes, Len says %d", ty, len(b), Len(m))
			}
			var got Msg
			if err := Decode(b, &got); err != nil {
				t.Fatalf("%v: decode: %v", ty, err)
			}
			normalize(m)
			normalize(&got)
			if got.Gossip == nil && m.Gossip == nil || len(got.Gossip) == 0 && len(m.Gossip) == 0 {
				got.Gossip, m.Gossip = nil, nil
			}
			if len(got.Exts) == 0 && len(m.Exts) == 0 {
				got.Exts, m.Exts = nil, nil
			}
			if !reflect.DeepEqual(&got, m) {
				t.Fatalf("%v: decoded %+v\nwant %+v", ty, got.Header, m.Header)
			}
			if !bytes.Equal(Encode(nil, &got), b) {
				t.Fatalf("%v: re-encode differs", ty)
			}
		}
	}
}

// TestExactLengths pins each type's totlen to Redis 7.0's: header 2256, gossip 104 each, FAIL +40,
// UPDATE +2096, PUBLISH +8+channel+message, MODULE +13+payload, auth and mfstart header only.
func TestExactLengths(t *testing.T) {
	cases := []struct {
		m    Msg
		want int
	}{
		{Msg{Header: Header{Type: Ping}, Gossip: make([]Gossip, 3)}, 2256 + 312},
		{Msg{Header: Header{Type: Meet}}, 2256},
		{Msg{Header: Header{Type: Pong}, Exts: []Ext{HostnameExt("abc")}}, 2256 + 16},
		{Msg{Header: Header{Type: Pong}, Exts: []Ext{HostnameExt("1234567")}}, 2256 + 16},
		{Msg{Header: Header{Type: Pong}, Exts: []Ext{HostnameExt("12345678")}}, 2256 + 24},
		{Msg{Header: Header{Type: Fail}}, 2296},
		{Msg{Header: Header{Type: Publish}, Channel: []byte("ch"), Message: []byte("hello")}, 2256 + 8 + 7},
		{Msg{Header: Header{Type: PublishShard}}, 2264},
		{Msg{Header: Header{Type: FailoverAuthRequest}}, 2256},
		{Msg{Header: Header{Type: FailoverAuthAck}}, 2256},
		{Msg{Header: Header{Type: MFStart}}, 2256},
		{Msg{Header: Header{Type: Update}}, 2256 + 2096},
		{Msg{Header: Header{Type: Module}, Payload: []byte("abc")}, 2256 + 16},
	}
	for _, c := range cases {
		b := Encode(nil, &c.m)
		if len(b) != c.want || int(binary.BigEndian.Uint32(b[4:])) != c.want {
			t.Errorf("%v: %d bytes (totlen %d), want %d", c.m.Type, len(b), binary.BigEndian.Uint32(b[4:]), c.want)
		}
		if string(b[:4]) != "RCmb" || binary.BigEndian.Uint16(b[8:]) != 1 {
			t.Errorf("%v: bad signature or version % x", c.m.Type, b[:10])
		}
	}
}

func TestFieldOffsets(t *testing.T) {
	m := Msg{Header: Header{Type: Pong, Port: 0x1234, CurrentEpoch: 5, ConfigEpoch: 6, Offset: 7,
		PPort: 0x0a0b, CPort: 0x0c0d, Flags: NodeMaster | NodeMyself, State: 1, MFlags: [3]byte{MFlagForceAck}}}
	m.Sender[0], m.SlaveOf[0], m.MyIP[0] = 'S', 'M', 'I'
	SetSlot(&m.MySlots, 9, true) // byte 1, bit 1
	m.Gossip = []Gossip{{PingSent: 0x01020304, Port: 0x7000, CPort: 0x7001, Flags: NodeSlave}}
	b := Encode(nil, &m)
	checks := []struct {
		off  int
		want []byte
	}{
		{10, []byte{0x12, 0x34}}, {12, []byte{0, 1}}, {14, []byte{0, 1}},
		{16, []byte{0, 0, 0, 0, 0, 0, 0, 5}}, {24, []byte{0, 0, 0, 0, 0, 0, 0, 6}}, {32, []byte{0, 0, 0, 0, 0, 0, 0, 7}},
		{40, []byte{'S'}}, {81, []byte{2}}, {2128, []byte{'M'}}, {2168, []byte{'I'}},
		{2246, []byte{0x0a, 0x0b}}, {2248, []byte{0x0c, 0x0d}}, {2250, []byte{0, 0x11}}, {2252, []byte{1, 2, 0, 0}},
		{2256 + 40, []byte{1, 2, 3, 4}}, {2256 + 94, []byte{0x70, 0, 0x70, 1, 0, 2}},
	}
	for _, c := range checks {
		if !bytes.Equal(b[c.off:c.off+len(c.want)], c.want) {
			t.Errorf("offset %d: % x, want % x", c.off, b[c.off:c.off+len(c.want)], c.want)
		}
	}
}

func setLen(b []byte) []byte {
	binary.BigEndian.PutUint32(b[4:], uint32(len(b)))
	return b
}

// TestMalformedDropped feeds the packets Redis 7.0 drops and checks each is refused with its reason.
func TestMalformedDropped(t *testing.T) {
	ping := Encode(nil, &Msg{Header: Header{Type: Ping}, Gossip: make([]Gossip, 2)})
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(ping)) }
	withExt := Encode(nil, &Msg{Header: Header{Type: Ping}, Exts: []Ext{HostnameExt("h")}})
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short", ping[:7], ErrShort},
		{"truncated", ping[:2400], ErrShort},
		{"signature", mut(func(b []byte) []byte { b[0] = 'X'; return b }), ErrSignature},
		{"under header", mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[4:], 2255); return b }), ErrSignature},
		{"version", mut(func(b []byte) []byte { b[9] = 2; return b }), ErrVersion},
		{"count too big", mut(func(b []byte) []byte { b[15] = 3; return b }), ErrLength},
		{"trailing bytes", setLen(append(bytes.Clone(ping), 0)), ErrLength},
		{"ext count beyond", func() []byte { b := bytes.Clone(withExt); b[2215] = 2; return b }(), ErrExt},
		{"ext unaligned", func() []byte { b := bytes.Clone(withExt); b[2256+3] = 12; return b }(), ErrExt},
		{"ext past end", func() []byte { b := bytes.Clone(withExt); b[2256+3] = 24; return b }(), ErrExt},
		{"ext unflagged", func() []byte { b := bytes.Clone(withExt); b[2253] = 0; return b }(), ErrLength},
	}
	for _, ty := range []Type{Fail, Update, FailoverAuthAck, MFStart} {
		b := Encode(nil, &Msg{Header: Header{Type: ty}})
		cases = append(cases, struct {
			name string
			b    []byte
			want error
		}{ty.String() + " +1", setLen(append(b, 0)), ErrLength})
	}
	pub := Encode(nil, &Msg{Header: Header{Type: Publish}, Channel: []byte("c"), Message: []byte("m")})
	binary.BigEndian.PutUint32(pub[2256:], 0xffffffff)
	cases = append(cases, struct {
		name string
		b    []byte
		want error
	}{"publish lengths", pub, ErrLength})
	for _, c := range cases {
		var m Msg
		if err := Decode(c.b, &m); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestUnknownExtensionKept(t *testing.T) {
	m := Msg{Header: Header{Type: Ping}, Exts: []Ext{{Type: 9, Data: make([]byte, 8)}, HostnameExt("host-1")}}
	var got Msg
	if err := Decode(Encode(nil, &m), &got); err != nil {
		t.Fatal(err)
	}
	if got.Hostname() != "host-1" || len(got.Exts) != 2 || got.Exts[0].Type != 9 {
		t.Fatalf("exts %+v", got.Exts)
	}
}

func TestDecodeAllocatesNothing(t *testing.T) {
	b := Encode(nil, &Msg{Header: Header{Type: Ping}, Gossip: make([]Gossip, 3)})
	var m Msg
	_ = Decode(b, &m)
	if n := testing.AllocsPerRun(100, func() { _ = Decode(b, &m) }); n != 0 {
		t.Fatalf("%v allocations per decode", n)
	}
}
