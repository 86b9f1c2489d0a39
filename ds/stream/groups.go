package stream

// groupSet holds a stream's consumer groups; nil while there is none.
type groupSet struct{}

func (g *groupSet) clone() *groupSet {
	if g == nil {
		return nil
	}
	return &groupSet{}
}

func (g *groupSet) memoryBytes() int { return 0 }
