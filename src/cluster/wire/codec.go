package wire

import "encoding/binary"

var be = binary.BigEndian

// Decode parses one whole message (b holds exactly totlen bytes, or more: the rest is ignored) into m,
// reusing m's Gossip and Exts slices. Slices in m alias b. It rejects what Redis 7.0's
// clusterProcessPacket drops: see the package doc.
func Decode(b []byte, m *Msg) error {
	n, err := Frame(b)
	if err != nil {
		return err
	}
	if len(b) < n {
		return ErrShort
	}
	b = b[:n]
	if be.Uint16(b[8:10]) != Version {
		return ErrVersion
	}
	decodeHeader(b, &m.Header)
	m.Gossip, m.Exts, m.Channel, m.Message, m.Payload, m.Raw = m.Gossip[:0], m.Exts[:0], nil, nil, nil, nil
	body := b[HeaderLen:]
	switch m.Type {
	case Ping, Pong, Meet:
		return decodePing(body, m)
	case Fail:
		if len(body) != FailLen {
			return ErrLength
		}
		copy(m.FailName[:], body)
	case Publish, PublishShard:
		return decodePublish(body, m)
	case FailoverAuthRequest, FailoverAuthAck, MFStart:
		if len(body) != 0 {
			return ErrLength
		}
	case Update:
		if len(body) != UpdateLen {
			return ErrLength
		}
		m.UpdateEpoch = be.Uint64(body)
		copy(m.UpdateName[:], body[8:])
		copy(m.UpdateSlots[:], body[8+NameLen:])
	case Module:
		if len(body) < moduleHead || uint64(len(body)) != moduleHead+uint64(be.Uint32(body[8:12])) {
			return ErrLength
		}
		m.ModuleID, m.ModuleType, m.Payload = be.Uint64(body), body[12], body[moduleHead:]
	default:
		m.Raw = body
	}
	return nil
}

func decodeHeader(b []byte, h *Header) {
	h.Type = Type(be.Uint16(b[12:]))
	h.Port = be.Uint16(b[10:])
	h.Count = be.Uint16(b[14:])
	h.CurrentEpoch = be.Uint64(b[16:])
	h.ConfigEpoch = be.Uint64(b[24:])
	h.Offset = be.Uint64(b[32:])
	copy(h.Sender[:], b[40:])
	copy(h.MySlots[:], b[80:])
	copy(h.SlaveOf[:], b[2128:])
	copy(h.MyIP[:], b[2168:])
	h.Extensions = be.Uint16(b[2214:])
	copy(h.Unused[:], b[2216:])
	h.PPort = be.Uint16(b[2246:])
	h.CPort = be.Uint16(b[2248:])
	h.Flags = be.Uint16(b[2250:])
	h.State = b[2252]
	copy(h.MFlags[:], b[2253:2256])
}

// decodePing reads count gossip entries, then, when the header flags extension data, exactly
// Extensions extensions, each a multiple of 8 bytes long and inside the message; nothing may follow.
func decodePing(body []byte, m *Msg) error {
	g := int(m.Count) * GossipLen
	if len(body) < g {
		return ErrLength
	}
	for i := 0; i < int(m.Count); i++ {
		m.Gossip = append(m.Gossip, decodeGossip(body[i*GossipLen:]))
	}
	rest := body[g:]
	if m.MFlags[0]&MFlagExtData != 0 {
		for range int(m.Extensions) {
			if len(rest) < extHead {
				return ErrExt
			}
			l := be.Uint32(rest)
			if l%8 != 0 || l < extHead || uint64(l) > uint64(len(rest)) {
				return ErrExt
			}
			m.Exts = append(m.Exts, Ext{Type: be.Uint16(rest[4:]), Unused: be.Uint16(rest[6:]), Data: rest[extHead:l]})
			rest = rest[l:]
		}
	}
	if len(rest) != 0 {
		return ErrLength
	}
	return nil
}

func decodeGossip(b []byte) Gossip {
	var e Gossip
	copy(e.Name[:], b)
	e.PingSent = be.Uint32(b[40:])
	e.PongReceived = be.Uint32(b[44:])
	copy(e.IP[:], b[48:])
	e.Port = be.Uint16(b[94:])
	e.CPort = be.Uint16(b[96:])
	e.Flags = be.Uint16(b[98:])
	e.PPort = be.Uint16(b[100:])
	e.Unused = be.Uint16(b[102:])
	return e
}

func decodePublish(body []byte, m *Msg) error {
	if len(body) < publishHead {
		return ErrLength
	}
	cl, ml := uint64(be.Uint32(body)), uint64(be.Uint32(body[4:]))
	if uint64(len(body)) != publishHead+cl+ml {
		return ErrLength
	}
	m.Channel = body[publishHead : publishHead+cl]
	m.Message = body[publishHead+cl:]
	return nil
}

// Len is the encoded length of m.
func Len(m *Msg) int {
	n := HeaderLen
	switch m.Type {
	case Ping, Pong, Meet:
		n += len(m.Gossip) * GossipLen
		for _, e := range m.Exts {
			n += extHead + len(e.Data)
		}
	case Fail:
		n += FailLen
	case Publish, PublishShard:
		n += publishHead + len(m.Channel) + len(m.Message)
	case FailoverAuthRequest, FailoverAuthAck, MFStart:
	case Update:
		n += UpdateLen
	case Module:
		n += moduleHead + len(m.Payload)
	default:
		n += len(m.Raw)
	}
	return n
}

// Encode appends m to dst. For PING, PONG and MEET it writes count = len(Gossip), and when m has
// extensions it sets MFlagExtData and writes their number; every Ext.Data must be a multiple of 8 bytes
// long (HostnameExt pads), else Encode panics.
func Encode(dst []byte, m *Msg) []byte {
	h := m.Header
	if IsGossipType(h.Type) {
		h.Count = uint16(len(m.Gossip))
		if len(m.Exts) > 0 {
			h.MFlags[0] |= MFlagExtData
			h.Extensions = uint16(len(m.Exts))
		}
	}
	dst = encodeHeader(dst, &h, Len(m))
	switch m.Type {
	case Ping, Pong, Meet:
		for i := range m.Gossip {
			dst = encodeGossip(dst, &m.Gossip[i])
		}
		for _, e := range m.Exts {
			if len(e.Data)%8 != 0 {
				panic("BUG: cluster bus extension not padded to 8 bytes")
			}
			dst = be.AppendUint32(dst, uint32(extHead+len(e.Data)))
			dst = be.AppendUint16(dst, e.Type)
			dst = be.AppendUint16(dst, e.Unused)
			dst = append(dst, e.Data...)
		}
	case Fail:
		dst = append(dst, m.FailName[:]...)
	case Publish, PublishShard:
		dst = be.AppendUint32(dst, uint32(len(m.Channel)))
		dst = be.AppendUint32(dst, uint32(len(m.Message)))
		dst = append(append(dst, m.Channel...), m.Message...)
	case FailoverAuthRequest, FailoverAuthAck, MFStart:
	case Update:
		dst = be.AppendUint64(dst, m.UpdateEpoch)
		dst = append(append(dst, m.UpdateName[:]...), m.UpdateSlots[:]...)
	case Module:
		dst = be.AppendUint64(dst, m.ModuleID)
		dst = be.AppendUint32(dst, uint32(len(m.Payload)))
		dst = append(append(dst, m.ModuleType), m.Payload...)
	default:
		dst = append(dst, m.Raw...)
	}
	return dst
}

func encodeHeader(dst []byte, h *Header, totlen int) []byte {
	dst = append(dst, Signature...)
	dst = be.AppendUint32(dst, uint32(totlen))
	dst = be.AppendUint16(dst, Version)
	dst = be.AppendUint16(dst, h.Port)
	dst = be.AppendUint16(dst, uint16(h.Type))
	dst = be.AppendUint16(dst, h.Count)
	dst = be.AppendUint64(dst, h.CurrentEpoch)
	dst = be.AppendUint64(dst, h.ConfigEpoch)
	dst = be.AppendUint64(dst, h.Offset)
	dst = append(dst, h.Sender[:]...)
	dst = append(dst, h.MySlots[:]...)
	dst = append(dst, h.SlaveOf[:]...)
	dst = append(dst, h.MyIP[:]...)
	dst = be.AppendUint16(dst, h.Extensions)
	dst = append(dst, h.Unused[:]...)
	dst = be.AppendUint16(dst, h.PPort)
	dst = be.AppendUint16(dst, h.CPort)
	dst = be.AppendUint16(dst, h.Flags)
	dst = append(dst, h.State)
	return append(dst, h.MFlags[:]...)
}

func encodeGossip(dst []byte, g *Gossip) []byte {
	dst = append(dst, g.Name[:]...)
	dst = be.AppendUint32(dst, g.PingSent)
	dst = be.AppendUint32(dst, g.PongReceived)
	dst = append(dst, g.IP[:]...)
	dst = be.AppendUint16(dst, g.Port)
	dst = be.AppendUint16(dst, g.CPort)
	dst = be.AppendUint16(dst, g.Flags)
	dst = be.AppendUint16(dst, g.PPort)
	return be.AppendUint16(dst, g.Unused)
}
