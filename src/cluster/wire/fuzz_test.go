package wire

import (
	"bytes"
	"testing"
)

// FuzzDecode: no input crashes Decode, and every accepted packet re-encodes to exactly its bytes.
// Run for 2 minutes: go test ./src/cluster/wire -run '^$' -fuzz FuzzDecode -fuzztime 2m
func FuzzDecode(f *testing.F) {
	seeds := []*Msg{
		{Header: Header{Type: Ping}, Gossip: make([]Gossip, 2), Exts: []Ext{HostnameExt("h")}},
		{Header: Header{Type: Meet}},
		{Header: Header{Type: Fail}},
		{Header: Header{Type: Publish}, Channel: []byte("c"), Message: []byte("m")},
		{Header: Header{Type: Update}},
		{Header: Header{Type: Module}, Payload: []byte("p")},
		{Header: Header{Type: MFStart}},
		{Header: Header{Type: 42}, Raw: []byte("x")},
	}
	for _, m := range seeds {
		f.Add(Encode(nil, m))
	}
	var m Msg
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ferr := Frame(b)
		err := Decode(b, &m)
		if err != nil {
			return
		}
		if ferr != nil || n > len(b) {
			t.Fatalf("decoded a packet Frame refuses: %v", ferr)
		}
		if out := Encode(nil, &m); !bytes.Equal(out, b[:n]) {
			t.Fatalf("re-encode differs (%d vs %d bytes)", len(out), n)
		}
	})
}
