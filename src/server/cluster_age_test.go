package server

import (
	"math"
	"testing"
	"time"
)

// TestBusDataAge: the data age the cluster's validity rule reads is the time since the last read
// while the link is up, since the link went down otherwise, and unbounded when it never was up or
// the server is no replica.
func TestBusDataAge(t *testing.T) {
	r := &replState{}
	if got := r.busDataAge(); got != math.MaxInt64 {
		t.Fatalf("no link: %d", got)
	}
	l := &masterLink{}
	r.link = l
	if got := r.busDataAge(); got != math.MaxInt64 {
		t.Fatalf("never up: %d", got)
	}
	now := time.Now()
	l.up.Store(true)
	l.lastIO.Store(now.Add(-2500 * time.Millisecond).UnixNano())
	l.downSince.Store(now.Add(-time.Hour).UnixNano())
	if got := r.busDataAge(); got < 2500 || got > 3500 {
		t.Fatalf("up, last read 2.5 s ago: %d ms", got)
	}
	l.up.Store(false)
	l.downSince.Store(now.Add(-7 * time.Second).UnixNano())
	if got := r.busDataAge(); got < 7000 || got > 8000 {
		t.Fatalf("down for 7 s: %d ms", got)
	}
	r.mu.Lock() // busy: the last value read stands in
	got := r.busDataAge()
	r.mu.Unlock()
	if got < 7000 || got > 8000 {
		t.Fatalf("while rs.mu is held: %d ms", got)
	}
}
