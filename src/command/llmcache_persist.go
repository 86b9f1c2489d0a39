package command

import (
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/src/ai/llmcache"
)

// An LLM cache's RDB payload (a module value of HotKV's module type "hotkv-llm", version 0;
// DUMP's the same) is src/ai/llmcache's encoding: the config (its EMBEDDER words included, so
// the embedder is rebuilt on load), statistics, entries with their vectors, FEEDBACK pairs.

// loadLLMCache decodes a payload into a load item.
func loadLLMCache(b []byte, it *loadItem) (int, error) {
	c, err := llmcache.Decode(b)
	if err != nil {
		return 0, err
	}
	v, err := newLLMValue(c)
	if err != nil {
		return 0, err
	}
	it.kind, it.obj = keyspace.KindLLMCache, v
	return int(c.MemoryUsage()), nil
}
