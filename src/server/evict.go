package server

import (
	"math"
	"time"

	"github.com/hotkv/hotkv/src/command"
	"github.com/hotkv/hotkv/src/config"
)

// The memory budget's plumbing: the eviction directives reach the engine at start and on every
// CONFIG SET of one of them (a lowered maxmemory is evicted down to by the cron's next steps),
// and the cron runs the engine's eviction step hz times a second.

// memoryNames are the directives memorySettings reads.
var memoryNames = []string{"maxmemory", "maxmemory-policy", "maxmemory-samples",
	"maxmemory-eviction-tenacity", "lfu-log-factor", "lfu-decay-time", "lazyfree-lazy-eviction"}

func memorySettings(cfg *config.Store) command.MemorySettings {
	limit := cfg.Int("maxmemory") // a uint64's bits: past MaxInt64 it reads negative
	if limit < 0 {
		limit = math.MaxInt64
	}
	return command.MemorySettings{
		MaxMemory:    limit,
		Policy:       cfg.String("maxmemory-policy"),
		Samples:      int(cfg.Int("maxmemory-samples")),
		Tenacity:     int(cfg.Int("maxmemory-eviction-tenacity")),
		LFULogFactor: cfg.Int("lfu-log-factor"),
		LFUDecayTime: cfg.Int("lfu-decay-time"),
		LazyEviction: cfg.Bool("lazyfree-lazy-eviction"),
	}
}

// applyMemory gives the engine the eviction directives now and on every change.
func (s *Server) applyMemory() {
	s.Engine.SetMemorySettings(memorySettings(s.cfg))
	for _, name := range memoryNames {
		s.cfg.OnChange(name, func(string) { s.Engine.SetMemorySettings(memorySettings(s.cfg)) })
	}
}

// evictCron is the cron's eviction step.
func (s *Server) evictCron() { s.Engine.Evict(time.Second / time.Duration(s.hz())) }
