package script

import "sync"

// libraries is the FUNCTION registry (functions.go).
type libraries struct {
	mu sync.RWMutex
}

func (l *libraries) init() {}
