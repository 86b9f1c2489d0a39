package command

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// An RDB written while clients add keys of a cluster-mode engine (slot index on) loads, checksum
// checked, with every key of the instant.
func TestWriteRDBWhileAddingSlotIndexed(t *testing.T) {
	e := newTestEngine()
	e.EnableSlotIndex()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 3 {
		c := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k := "key:" + strconv.Itoa(w) + ":" + strconv.Itoa(i)
				c.do("SET", k, "v"+k)
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for round := range 8 {
		file := writeRDB(t, e, RDBOptions{Checksum: true})
		dst := newTestEngine()
		if _, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
