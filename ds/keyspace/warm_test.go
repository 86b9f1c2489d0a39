package keyspace

import (
	"strconv"
	"testing"
)

// Head and Match find the same entry as a lookup, or nil for a missing key; Touch reads the
// entry's bytes without changing them.
func TestWarmFindsWhatFindFinds(t *testing.T) {
	ks := New()
	for i := range 5000 {
		e, _ := ks.Upsert([]byte("key:"+strconv.Itoa(i)), 1)
		e.Kind = KindString
		e.SetBytes(make([]byte, i%2000))
	}
	for i := range 6000 {
		key := []byte("key:" + strconv.Itoa(i))
		h := Hash(key)
		got, want := Match(ks.Head(h), key), ks.Peek(key, 1)
		if got != want {
			t.Fatalf("%s: Match gave %p, Peek %p", key, got, want)
		}
		if got != nil {
			before := len(got.Bytes())
			got.Touch()
			if len(got.Bytes()) != before || got.Key() != string(key) {
				t.Fatalf("%s: Touch changed the entry", key)
			}
		}
	}
}
