package command

import (
	"github.com/hotkv/hotkv/ds/agentmem"
	"github.com/hotkv/hotkv/ds/keyspace"
)

// An agent memory in RDB and DUMP is a module value of HotKV's module type "hotkv-mem"
// (persist/rdb/module.go) whose payload is ds/agentmem's encoding: its HNSW index as ds/vector
// encodes it (so loading does not rebuild the graph), its records and its windows. Like a vector
// set, a file holding one does not load in Redis ("module hotkv-mem not loaded").

// loadAgentMem decodes an RDB or RESTORE payload into it.
func loadAgentMem(b []byte, it *loadItem) (int, error) {
	s, err := agentmem.Decode(b)
	if err != nil {
		return 0, err
	}
	v, err := newMemValue(s)
	if err != nil {
		return 0, err
	}
	it.kind, it.obj = keyspace.KindAgentMem, v
	return int(s.MemoryUsage()), nil
}
