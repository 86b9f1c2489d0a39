package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestDumpPayloadRules: DumpPayload writes Redis's bytes, and CheckDump and
// DecodeObject refuse what redis-server 7.0.15's RESTORE refuses.
func TestDumpPayloadRules(t *testing.T) {
	s := startRedis(t, t.TempDir())
	c := s.client(t)
	c.must(t, "SET", "k", "some value")
	c.must(t, "HSET", "h", "f", "v")
	redisDump := c.must(t, "DUMP", "k").([]byte)
	e := &Encoder{OmitKey: true}
	e.StringValue(nil, []byte("some value"))
	if ours := DumpPayload(nil, e.Buf, Version); !bytes.Equal(ours, redisDump) {
		t.Fatalf("DumpPayload %x, redis DUMP %x", ours, redisDump)
	}
	reseal := func(obj []byte, version uint16) []byte {
		b := binary.LittleEndian.AppendUint16(bytes.Clone(obj), version)
		return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
	}
	obj := redisDump[:len(redisDump)-10]
	hobj := c.must(t, "DUMP", "h").([]byte)
	hobj = hobj[:len(hobj)-10]
	badLP := bytes.Clone(hobj)
	badLP[2]++ // the listpack's total-bytes header no longer matches its string
	cases := []struct {
		name    string
		payload []byte
		redis   string // RESTORE's error; "" accepted
	}{
		{"as dumped", redisDump, ""},
		{"version 11", reseal(obj, 11), "ERR DUMP payload version or checksum are wrong"},
		{"version 9", reseal(obj, 9), ""},
		{"checksum flipped", append(bytes.Clone(redisDump[:len(redisDump)-1]), redisDump[len(redisDump)-1]^1), "ERR DUMP payload version or checksum are wrong"},
		{"checksum zero", append(bytes.Clone(redisDump[:len(redisDump)-8]), make([]byte, 8)...), "ERR DUMP payload version or checksum are wrong"},
		{"too short", redisDump[:9], "ERR DUMP payload version or checksum are wrong"},
		// RESTORE reads a value running short on into the footer, so cut deep.
		{"truncated object", reseal(obj[:1], 10), "ERR Bad data format"},
		{"listpack header", reseal(badLP, 10), "ERR Bad data format"},
		{"unknown type", reseal(append([]byte{8}, obj[1:]...), 10), "ERR Bad data format"},
	}
	for i, tc := range cases {
		r, err := c.do("RESTORE", "r"+string(rune('a'+i)), 0, tc.payload)
		if err != nil {
			t.Fatal(err)
		}
		redisErr := ""
		if e, ok := r.(respError); ok {
			redisErr = string(e)
		}
		if redisErr != tc.redis {
			t.Fatalf("%s: redis answered %q, the test expects %q", tc.name, redisErr, tc.redis)
		}
		ourErr := ""
		o, err := CheckDump(tc.payload, Version)
		if err != nil {
			ourErr = "ERR " + err.Error()
		} else if _, err := DecodeObject(o); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: %v does not wrap ErrCorrupt", tc.name, err)
			}
			ourErr = "ERR Bad data format"
		}
		if ourErr != redisErr {
			t.Errorf("%s: ours %q, redis %q", tc.name, ourErr, redisErr)
		}
	}
}

// TestDecoderErrors: each kind of bad file gets an error saying what and where.
func TestDecoderErrors(t *testing.T) {
	withEOF := func(b []byte) []byte {
		return binary.LittleEndian.AppendUint64(append(b, OpEOF), 0)
	}
	hdr := []byte("REDIS0010")
	e := &Encoder{}
	e.HashValue([]byte("h"), 1, func() ([]byte, []byte) { return []byte("f"), []byte("v") })
	badLP := bytes.Clone(e.Buf)
	badLP[len(badLP)-2] = 0x7f // the value's back length
	old, _ := ziplistEraFile()
	i := bytes.Index(old, []byte("ziplist"))
	badZL := bytes.Clone(old)
	badZL[i+7+5+10] = 5 // after the key, a 5-byte length and the header: the first entry's previous length, which must be 0
	good := withEOF(append(bytes.Clone(hdr), OpAux, 1, 'a', 1, 'b'))
	badSum := bytes.Clone(good)
	badSum[len(badSum)-1] = 1
	cases := []struct {
		name string
		file []byte
		want string
		is   error
	}{
		{"signature", []byte("REDIX0010"), "wrong signature", ErrCorrupt},
		{"version", []byte("REDIS0012"), "can't handle RDB format version", ErrCorrupt},
		{"module aux", withEOF(append(bytes.Clone(hdr), OpModuleAux, 0)), "module aux data not supported", ErrModuleAux},
		{"module type", withEOF(append(bytes.Clone(hdr), TypeModule2, 1, 'k', 0)), "module types not supported", ErrModuleType},
		{"function pre-GA", withEOF(append(bytes.Clone(hdr), OpFunctionPreGA)), "pre-release function format", ErrFunctionPre},
		{"checksum", badSum, "checksum mismatch", ErrCorrupt},
		{"listpack", withEOF(append(bytes.Clone(hdr), badLP...)), "at offset 12: bad listpack: bad back length at byte", ErrCorrupt},
		{"ziplist", badZL, "bad ziplist: previous length 5", ErrCorrupt},
		{"truncated", good[:12], "unexpected EOF", ErrCorrupt},
		{"opcode", withEOF(append(bytes.Clone(hdr), 8)), "at offset 9: unknown RDB type or opcode 8", ErrCorrupt},
	}
	for _, tc := range cases {
		err := decodeErr(tc.file)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := decodeErr(good); err != nil {
		t.Fatalf("good file: %v", err)
	}
}

// TestRedis72Types decodes SET_LISTPACK (20) and STREAM_LISTPACKS_3 (21),
// which Redis 7.2 writes and 7.0.15 cannot load, plus STREAM_LISTPACKS (15)
// of Redis 5-6, against what the test wrote.
func TestRedis72Types(t *testing.T) {
	var lp Listpack
	members := []string{"a", "17", "-5000", strings.Repeat("z", 70)}
	for _, m := range members {
		lp.Append([]byte(m))
	}
	e := &Encoder{OmitKey: true}
	e.Type(TypeSetListpack)
	e.String(lp.Bytes())
	v, err := DecodeObject(e.Buf)
	if err != nil || v.Type != ValSet || v.Encoding != "listpack" || len(v.Elems) != 4 {
		t.Fatalf("set listpack: %v %+v", err, v)
	}
	for i, m := range members {
		if string(v.Elems[i]) != m {
			t.Errorf("member %d %q, want %q", i, v.Elems[i], m)
		}
	}

	s := &Stream{Entries: []StreamEntry{{StreamID{5, 1}, [][]byte{[]byte("f"), []byte("v")}}, {StreamID{6, 0}, [][]byte{[]byte("g"), []byte("1")}}},
		Length: 2, LastID: StreamID{6, 0}}
	for _, tt := range []byte{TypeStreamListpacks, TypeStreamListpacks3} {
		e.Buf = e.Buf[:0]
		e.Type(tt)
		e.Len(1)
		e.streamNode(s.Entries, 0, &DefaultLimits)
		e.Len(2)
		e.streamID(s.LastID)
		if tt == TypeStreamListpacks3 {
			e.streamID(StreamID{5, 1})
			e.streamID(StreamID{})
			e.Len(2)
		}
		e.Len(1) // one group
		e.String([]byte("g"))
		e.streamID(StreamID{6, 0})
		if tt == TypeStreamListpacks3 {
			e.Len(2)
		}
		e.Len(1)
		e.rawID(StreamID{6, 0})
		e.Buf = binary.LittleEndian.AppendUint64(e.Buf, 1234)
		e.Len(3)
		e.Len(1) // one consumer
		e.String([]byte("c"))
		e.Buf = binary.LittleEndian.AppendUint64(e.Buf, 5678)
		if tt == TypeStreamListpacks3 {
			e.Buf = binary.LittleEndian.AppendUint64(e.Buf, 9012)
		}
		e.Len(1)
		e.rawID(StreamID{6, 0})
		v, err := DecodeObject(e.Buf)
		if err != nil {
			t.Fatalf("type %d: %v", tt, err)
		}
		got := v.Stream
		wantRead, wantActive := int64(-1), int64(-1)
		if tt == TypeStreamListpacks3 {
			wantRead, wantActive = 2, 9012
		}
		g := got.Groups[0]
		if len(got.Entries) != 2 || got.Entries[1].ID != (StreamID{6, 0}) || string(got.Entries[1].Fields[0]) != "g" ||
			got.FirstID != (StreamID{5, 1}) || got.EntriesAdded != 2 || g.EntriesRead != wantRead ||
			g.Consumers[0].ActiveTimeMs != wantActive || g.Consumers[0].SeenTimeMs != 5678 ||
			string(g.PEL[0].Consumer) != "c" || g.PEL[0].DeliveryCount != 3 || g.PEL[0].DeliveryTimeMs != 1234 {
			t.Errorf("type %d decoded %+v, group %+v", tt, got, g)
		}
	}
}
