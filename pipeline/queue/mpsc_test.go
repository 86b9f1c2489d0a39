package queue

import (
	"sync"
	"testing"
)

func TestMPSCOrderPerProducer(t *testing.T) {
	const producers, perProducer = 8, 5000
	var q MPSC[[2]int]
	var wg sync.WaitGroup
	nodes := make([][]Node[[2]int], producers)
	for p := range producers {
		nodes[p] = make([]Node[[2]int], perProducer)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProducer {
				nodes[p][i].Value = [2]int{p, i}
				q.Push(&nodes[p][i])
			}
		}()
	}
	next := make([]int, producers)
	got := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	consume := func() {
		for n := q.PopAll(); n != nil; n = n.Next() {
			p, i := n.Value[0], n.Value[1]
			if i != next[p] {
				t.Fatalf("producer %d: got item %d, want %d", p, i, next[p])
			}
			next[p]++
			got++
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		consume()
	}
	consume()
	if got != producers*perProducer {
		t.Fatalf("consumed %d items, want %d", got, producers*perProducer)
	}
	if !q.Empty() {
		t.Fatal("queue not empty after draining")
	}
}

func TestMPSCPushReportsEmpty(t *testing.T) {
	var q MPSC[int]
	a, b := &Node[int]{Value: 1}, &Node[int]{Value: 2}
	if !q.Push(a) {
		t.Fatal("first push into empty queue reported non-empty")
	}
	if q.Push(b) {
		t.Fatal("second push reported empty")
	}
	n := q.PopAll()
	if n.Value != 1 || n.Next().Value != 2 || n.Next().Next() != nil {
		t.Fatal("PopAll did not return FIFO order")
	}
}
