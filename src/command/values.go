package command

import (
	"github.com/hotkv/hotkv/ds/budget"
	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/zset"
)

// An Entry stores a collection as an untyped pointer whose type its Kind names (ds/keyspace,
// "Entries" in docs/decisions.md). The families read their own kind with keyspace.Obj[T]; what
// works on any collection (COPY's Clone, OBJECT ENCODING, SORT's sources, the warmer) goes through
// objOf and setObjOf, the one place that maps kinds to types.

// objOf returns e's collection as its typed pointer in an interface, or nil for a string or an
// entry without a value.
func objOf(e *keyspace.Entry) any {
	if !e.HasValue() {
		return nil
	}
	switch e.Kind {
	case keyspace.KindList:
		return keyspace.Obj[list.List](e)
	case keyspace.KindHash:
		return keyspace.Obj[hash.Hash](e)
	case keyspace.KindSet:
		return keyspace.Obj[dset.Set](e)
	case keyspace.KindZSet:
		return keyspace.Obj[zset.ZSet](e)
	case keyspace.KindStream:
		return keyspace.Obj[stream.Stream](e)
	case keyspace.KindVectorSet:
		return keyspace.Obj[vsetValue](e)
	case keyspace.KindLLMCache:
		return keyspace.Obj[llmValue](e)
	case keyspace.KindIPSet:
		return keyspace.Obj[ipsetValue](e)
	case keyspace.KindAgentMem:
		return keyspace.Obj[memValue](e)
	case keyspace.KindBudget:
		return keyspace.Obj[budget.Budget](e)
	}
	return nil
}

// setObjOf stores obj, a collection of the kind k as objOf returns it, in e.
func setObjOf(e *keyspace.Entry, k keyspace.Kind, obj any) {
	switch o := obj.(type) {
	case *list.List:
		keyspace.SetObj(e, k, o)
	case *hash.Hash:
		keyspace.SetObj(e, k, o)
	case *dset.Set:
		keyspace.SetObj(e, k, o)
	case *zset.ZSet:
		keyspace.SetObj(e, k, o)
	case *stream.Stream:
		keyspace.SetObj(e, k, o)
	case *vsetValue:
		keyspace.SetObj(e, k, o)
	case *llmValue:
		keyspace.SetObj(e, k, o)
	case *ipsetValue:
		keyspace.SetObj(e, k, o)
	case *memValue:
		keyspace.SetObj(e, k, o)
	case *budget.Budget:
		keyspace.SetObj(e, k, o)
	default:
		panic("BUG: a collection of kind " + k.String() + " has no type")
	}
}
