package rdb

import (
	"fmt"
	"strings"
)

// Module values (RDB_TYPE_MODULE_2). HotKV writes one kind: a vector set, under its own module
// type "hotkv-vec" (encoding version 0), never under Redis 8's "vectorset" id, since the
// payload is HotKV's index encoding (ds/vector's AppendBinary), not Redis's vset layout. A Redis
// server meeting such a key stops loading with "module hotkv-vec not loaded" (Redis 7) or the
// same for a Redis 8 without such a module, instead of misreading it; a file holding no vector
// set has no module value and loads in Redis as before (docs/decisions.md, "Vector sets in RDB").
//
// The value is Redis's module serialization: the 64-bit module id (rdbSaveLen), then opcodes:
// RDB_MODULE_OPCODE_STRING (5) with the payload as an RDB string, and RDB_MODULE_OPCODE_EOF (0).
// Any other module id is ErrModuleType, as before.

// ValModule is a module value the decoder knows (Value.Module, Value.Str the payload).
const ValModule ValueType = 64

const (
	moduleOpEOF    = 0
	moduleOpString = 5
	moduleCharset  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// ModuleID is Redis's moduleTypeEncodeId: nine 6-bit characters of name, then a 10-bit
// encoding version.
func ModuleID(name string, encver uint64) uint64 {
	if len(name) != 9 {
		panic("BUG: a module type name has 9 characters: " + name)
	}
	var id uint64
	for i := 0; i < 9; i++ {
		id = id<<6 | uint64(strings.IndexByte(moduleCharset, name[i]))
	}
	return id<<10 | encver&1023
}

// ModuleName decodes a module id's type name and encoding version.
func ModuleName(id uint64) (string, uint64) {
	var b [9]byte
	v := id >> 10
	for i := 8; i >= 0; i-- {
		b[i] = moduleCharset[v&63]
		v >>= 6
	}
	return string(b[:]), id & 1023
}

// VectorSetModule is the module id HotKV writes vector sets under.
var VectorSetModule = ModuleID("hotkv-vec", 0)

// LLMCacheModule is the module id HotKV writes LLM caches under (src/command/llmcache_persist.go).
var LLMCacheModule = ModuleID("hotkv-llm", 0)

// AgentMemModule is the module id HotKV writes agent memories under (src/command/mem_persist.go).
var AgentMemModule = ModuleID("hotkv-mem", 0)

// BudgetModule is the module id HotKV writes token budgets under (src/command/budget*.go).
var BudgetModule = ModuleID("hotkv-bgt", 0)

// ModuleValue appends a module value of module id whose data is payload.
func (e *Encoder) ModuleValue(key []byte, id uint64, payload []byte) {
	e.typeKey(TypeModule2, key)
	e.Len(id)
	e.Len(moduleOpString)
	e.String(payload)
	e.Len(moduleOpEOF)
}

// module reads a module value: only HotKV's own module types decode.
func (d *Decoder) module(at int64, v *Value) error {
	id, err := d.rd.len()
	if err != nil {
		return err
	}
	if id != VectorSetModule && id != LLMCacheModule && id != BudgetModule && id != AgentMemModule {
		name, ver := ModuleName(id)
		return fmt.Errorf("%w: module %s (encoding version %d) (offset %d)", ErrModuleType, name, ver, at)
	}
	op, err := d.rd.len()
	if err != nil {
		return err
	}
	if op != moduleOpString {
		return d.rd.corrupt(at, "module value opcode %d, want a string", op)
	}
	if v.Str, _, err = d.rd.str(v.Str[:0], &d.lzf); err != nil {
		return err
	}
	if op, err = d.rd.len(); err != nil {
		return err
	}
	if op != moduleOpEOF {
		return d.rd.corrupt(at, "module value not ended by EOF (opcode %d)", op)
	}
	v.Type, v.Encoding, v.Module = ValModule, "module", id
	return nil
}
