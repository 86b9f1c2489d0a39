package hash

// Deadlines is a min-heap of names by time (unix ms). A large hash keeps its fields' TTLs in one,
// and the command layer's active expiry keeps the keys of hashes with expiring fields in another.
// Entries are never removed except from the top: callers skip the stale ones when they surface.
type Deadlines struct{ heap []Deadline }

// Deadline is one entry of Deadlines.
type Deadline struct {
	At   int64 // unix ms
	Name string
}

// Len returns the number of entries, stale ones included.
func (d *Deadlines) Len() int { return len(d.heap) }

// Min returns the earliest entry; ok is false when there is none.
func (d *Deadlines) Min() (e Deadline, ok bool) {
	if len(d.heap) == 0 {
		return Deadline{}, false
	}
	return d.heap[0], true
}

// Push adds name at time at.
func (d *Deadlines) Push(at int64, name string) {
	d.heap = append(d.heap, Deadline{at, name})
	h := d.heap
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].At <= h[i].At {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

// Pop removes and returns the earliest entry; the heap must not be empty.
func (d *Deadlines) Pop() Deadline {
	h := d.heap
	top := h[0]
	last := len(h) - 1
	h[0], h[last] = h[last], Deadline{}
	h = h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].At < h[c].At {
			c++
		}
		if h[i].At <= h[c].At {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	d.heap = h
	if len(h) == 0 {
		d.heap = nil
	}
	return top
}
