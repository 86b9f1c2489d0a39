// Package queue holds the batched lock-free queues that link the pipeline's stages.
//
// It imports nothing from the project.
package queue

import "sync/atomic"

// Node is the intrusive link of an MPSC queue. Embed it in the item; the item must stay
// reachable and unmodified by its producer from Push until the consumer has popped it.
type Node[T any] struct {
	next  *Node[T]
	Value T
}

// Next returns the node after n in a batch returned by PopAll, or nil at the end.
func (n *Node[T]) Next() *Node[T] { return n.next }

// MPSC is an unbounded, lock-free, multi-producer single-consumer queue of intrusive nodes.
//
// Ownership protocol: any goroutine may Push a node it owns; from then until the node comes
// back from PopAll the queue owns it and nobody may touch it. Only one goroutine at a time
// (the holder of the consumer's token) may call PopAll. PopAll takes everything pushed so far
// in one atomic swap, so the consumer pays one atomic operation per batch, not per item.
//
// The queue is unbounded by itself: bounding is the producers' job. In the pipeline each
// connection has at most one batch in flight, so a mailbox never holds more than one node per
// connection and a slow shard makes its clients stop reading (backpressure) instead of growing.
type MPSC[T any] struct {
	head atomic.Pointer[Node[T]] // most recently pushed first
}

// Push adds n. It reports whether the queue was empty before.
func (q *MPSC[T]) Push(n *Node[T]) (wasEmpty bool) {
	for {
		old := q.head.Load()
		n.next = old
		if q.head.CompareAndSwap(old, n) {
			return old == nil
		}
	}
}

// Empty reports whether nothing is queued. It is a snapshot: a producer may push right after.
func (q *MPSC[T]) Empty() bool { return q.head.Load() == nil }

// PopAll removes every queued node and returns them oldest first, linked through Next.
func (q *MPSC[T]) PopAll() *Node[T] {
	n := q.head.Swap(nil)
	var fifo *Node[T]
	for n != nil {
		next := n.next
		n.next = fifo
		fifo = n
		n = next
	}
	return fifo
}
