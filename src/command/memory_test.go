package command

// wireMemory makes CONFIG SET of the eviction directives reach a test engine, as src/server's
// applyMemory does for a server (newTestEngine calls it).
func wireMemory(e *Engine, st testStore) {
	apply := func(string) {
		e.SetMemorySettings(MemorySettings{
			MaxMemory: st.Int("maxmemory"), Policy: st.String("maxmemory-policy"),
			Samples: int(st.Int("maxmemory-samples")), Tenacity: int(st.Int("maxmemory-eviction-tenacity")),
			LFULogFactor: st.Int("lfu-log-factor"), LFUDecayTime: st.Int("lfu-decay-time"),
			LazyEviction: st.Bool("lazyfree-lazy-eviction"),
		})
	}
	apply("")
	for _, name := range []string{"maxmemory", "maxmemory-policy", "maxmemory-samples",
		"maxmemory-eviction-tenacity", "lfu-log-factor", "lfu-decay-time", "lazyfree-lazy-eviction"} {
		st.OnChange(name, apply)
	}
}
