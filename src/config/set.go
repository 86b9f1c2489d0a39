package config

import (
	"errors"
	"os"
)

// Wire errors of CONFIG SET that do not name a directive's value.
const (
	errLoading = "LOADING Redis is loading the dataset in memory"
)

// Set applies CONFIG SET <name> <value> [<name> <value> ...] for a client
// that is not on a local connection; see SetFrom.
func (s *Store) Set(pairs [][2]string) error { return s.SetFrom(pairs, false) }

// SetFrom applies CONFIG SET atomically, as Redis 7 does: every name is
// checked (unknown, immutable, protected, repeated), then every value is
// parsed into a copy of the configuration, then the apply hooks run; any
// failure leaves the configuration as it was. The error text is Redis's
// reply without the leading '-'. local says the client is on a loopback or
// unix socket connection, which enable-protected-configs "local" admits.
// An odd argument count is the caller's "ERR syntax error".
func (s *Store) SetFrom(pairs [][2]string, local bool) error {
	if len(pairs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.snap.Load()
	ents, err := s.checkNames(old.vals, pairs, local)
	if err != nil {
		return err
	}
	vals, changed, asked, err := s.parseValues(old.vals, pairs, ents)
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

// parseValues sets every pair on a copy of old and returns it with the
// directives whose value changed, in request order, and the name each was
// first set by (for error messages).
func (s *Store) parseValues(old []value, pairs [][2]string, ents []entry) ([]value, []int, map[int]string, error) {
	vals := append([]value(nil), old...)
	ctx := &setCtx{vals: vals, file: s.file, applyDir: true}
	var changed []int
	asked := map[int]string{}
	for i, p := range pairs {
		e := ents[i]
		d := table[e.dir]
		v, msg := d.setArgs(ctx, vals[e.dir], d.splitValue(p[1]))
		if msg != "" {
			return nil, nil, nil, setError(e.name, msg)
		}
		if v == vals[e.dir] && d.flags&flagVolatile == 0 {
			continue // unchanged: Redis runs no apply function either
		}
		if d.setClamp != nil {
			v.n = d.setClamp(v.n)
		}
		vals[e.dir] = v
		if _, ok := asked[e.dir]; !ok {
			asked[e.dir] = e.name
			changed = append(changed, e.dir)
		}
	}
	// A later pair may have put a value back; only real changes count.
	kept := changed[:0]
	for _, i := range changed {
		if vals[i] != old[i] || table[i].flags&flagVolatile != 0 {
			kept = append(kept, i)
		}
	}
	return vals, kept, asked, nil
}

// checkNames resolves the names and reports the first problem among them,
// with Redis's precedence: the first bad name decides the error.
func (s *Store) checkNames(vals []value, pairs [][2]string, local bool) ([]entry, error) {
	ents := make([]entry, len(pairs))
	for i, p := range pairs {
		e, ok := lookupEntry(p[0])
		if !ok {
			return nil, errors.New("ERR Unknown option or number of arguments for CONFIG SET - '" + p[0] + "'")
		}
		d := table[e.dir]
		switch {
		case d.flags&flagImmutable != 0:
			return nil, setError(p[0], "can't set immutable config")
		case d.flags&flagProtected != 0 && !protectedAllowed(vals, local):
			return nil, setError(p[0], "can't set protected config")
		case d.flags&flagDenyLoading != 0 && s.loading.Load():
			return nil, errors.New(errLoading)
		}
		for j := 0; j < i; j++ {
			if ents[j].name == e.name {
				return nil, setError(p[0], "duplicate parameter")
			}
		}
		ents[i] = e
	}
	return ents, nil
}

func protectedAllowed(vals []value, local bool) bool {
	switch vals[mustDir("enable-protected-configs")].n {
	case 1: // yes
		return true
	case 2: // local
		return local
	}
	return false
}

// apply puts changed values into effect: the working directory first (the
// one side effect the config package owns), then the OnApply hooks. On a
// failure everything already applied is re-applied with its old value.
func (s *Store) apply(oldVals, vals []value, changed []int, asked map[int]string) error {
	var done []int
	undo := func() {
		for k := len(done) - 1; k >= 0; k-- {
			i := done[k]
			if i == registry.dirIndex {
				_ = os.Chdir(oldVals[i].s)
			}
			for _, fn := range s.onApply[i] {
				_ = fn(table[i].get(oldVals[i]))
			}
		}
	}
	for _, i := range changed {
		done = append(done, i)
		if i == registry.dirIndex {
			if err := os.Chdir(vals[i].s); err != nil {
				done = done[:len(done)-1]
				undo()
				return setError(asked[i], strerror(err))
			}
			if wd := getwd(); wd != "" {
				vals[i].s = wd
			}
		}
		for _, fn := range s.onApply[i] {
			if err := fn(table[i].get(vals[i])); err != nil {
				undo()
				return setError(asked[i], err.Error())
			}
		}
	}
	return s.applyGroups(oldVals, vals, changed, asked, undo)
}

// applyGroups runs each OnApplyGroup hook one of whose directives changed, once, with the new
// values; on a failure the groups already run get the old values back, then undo runs.
func (s *Store) applyGroups(oldVals, vals []value, changed []int, asked map[int]string, undo func()) error {
	getter := func(vs []value) func(string) string {
		return func(name string) string { i := mustDir(name); return table[i].get(vs[i]) }
	}
	var ran []groupHook
	for _, g := range s.onGroup {
		first := -1
		for _, i := range changed {
			if g.dirs[i] {
				first = i
				break
			}
		}
		if first < 0 {
			continue
		}
		if err := g.fn(getter(vals)); err != nil {
			for k := len(ran) - 1; k >= 0; k-- {
				_ = ran[k].fn(getter(oldVals))
			}
			undo()
			return setError(asked[first], err.Error())
		}
		ran = append(ran, g)
	}
	return nil
}
