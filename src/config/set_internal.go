package config

// SetInternal sets one directive the way the server itself changes it, not a client: immutable
// and protected directives are settable (REPLICAOF and SLAVEOF update replicaof, as Redis's
// replicaofCommand updates server.masterhost, so CONFIG REWRITE writes it and NO ONE removes it).
// The value is parsed as CONFIG SET would; apply and change hooks run as they do for CONFIG SET.
func (s *Store) SetInternal(name, val string) error {
	e, ok := lookupEntry(name)
	if !ok {
		panic("BUG: unknown config directive " + name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.snap.Load()
	pairs := [][2]string{{name, val}}
	vals, changed, asked, err := s.parseValues(old.vals, pairs, []entry{e})
	if err != nil {
		return err
	}
	if err := s.apply(old.vals, vals, changed, asked); err != nil {
		return err
	}
	s.snap.Store(&snapshot{vals: vals, cfg: buildConfig(vals, old.cfg.Version+1)})
	for _, i := range changed {
		for _, fn := range s.onChange[i] {
			fn(table[i].get(vals[i]))
		}
	}
	return nil
}
