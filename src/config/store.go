package config

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hotkv/hotkv/ds/strs"
)

// Store holds the server's configuration. It is safe for concurrent use:
// readers (Current, Get, Int, …) load an immutable snapshot with one atomic
// read and take no lock; writers (Set, Rewrite) serialize on a mutex and
// publish a new snapshot when they succeed.
type Store struct {
	mu      sync.Mutex // serializes writers and guards the hook lists
	snap    atomic.Pointer[snapshot]
	file    string
	loading atomic.Bool

	onChange map[int][]func(string)
	onApply  map[int][]func(string) error
	onReset  []func()
	onGroup  []groupHook

	renames [][2]string // rename-command lines of the config file
	users   [][]string  // user lines of the config file, for the ACL layer
	// userLines, when set, returns the ACL users as "user <name> <rules>" lines, which CONFIG
	// REWRITE writes (rewriteUsers).
	userLines func() []string
}

type snapshot struct {
	vals []value
	cfg  *Config
}

// Default returns a Store holding Redis 7.0.15's defaults (with HotKV's
// bind and its own directives) and no config file.
func Default() *Store {
	return newStore(defaultValues(), "")
}

func newStore(vals []value, file string) *Store {
	s := &Store{file: file, onChange: map[int][]func(string){}, onApply: map[int][]func(string) error{}}
	s.snap.Store(&snapshot{vals: vals, cfg: buildConfig(vals, 1)})
	return s
}

// Current returns the latest typed snapshot. It never blocks.
func (s *Store) Current() *Config { return s.snap.Load().cfg }

// ConfigFile is the absolute path of the file the configuration was loaded
// from, or "" when there was none (CONFIG REWRITE then fails).
func (s *Store) ConfigFile() string { return s.file }

// Get answers CONFIG GET for one pattern; see GetAll.
func (s *Store) Get(pattern string) [][2]string { return s.GetAll(pattern) }

// GetAll answers CONFIG GET <pattern> [<pattern> ...] as name/value pairs,
// sorted by name (Redis's own order is its hash table's). A pattern without
// glob characters is an exact, case-insensitive name and is answered under
// the name as given; glob patterns match names case-insensitively, skip
// hidden directives and answer under the directive's own spelling. A
// directive is listed once however many patterns match it.
func (s *Store) GetAll(patterns ...string) [][2]string {
	vals := s.snap.Load().vals
	seen := map[string]bool{}
	var out [][2]string
	for _, p := range patterns {
		if !strings.ContainsAny(p, "[*?") {
			e, ok := lookupEntry(p)
			if ok && !seen[e.name] {
				seen[e.name] = true
				out = append(out, [2]string{p, table[e.dir].get(vals[e.dir])})
			}
			continue
		}
		pb := []byte(p)
		for _, e := range registry.sorted {
			d := table[e.dir]
			if d.flags&flagHidden != 0 || seen[e.name] || !strs.Glob(pb, []byte(e.name), true) {
				continue
			}
			seen[e.name] = true
			out = append(out, [2]string{e.name, d.get(vals[e.dir])})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Lookup returns a directive's CONFIG GET value.
func (s *Store) Lookup(name string) (string, bool) {
	e, ok := lookupEntry(name)
	if !ok {
		return "", false
	}
	return table[e.dir].get(s.snap.Load().vals[e.dir]), true
}

// Int returns a numeric, boolean (0/1) or enum directive's value. Unsigned
// 64-bit values (maxmemory) come back as their bits. It panics on an
// unknown name: names are fixed at compile time.
func (s *Store) Int(name string) int64 { return s.snap.Load().vals[mustDir(name)].n }

// Bool returns a yes/no directive's value.
func (s *Store) Bool(name string) bool { return s.Int(name) != 0 }

// String returns a directive's value as CONFIG GET shows it. It panics on
// an unknown name.
func (s *Store) String(name string) string {
	i := mustDir(name)
	return table[i].get(s.snap.Load().vals[i])
}

// IsSensitive reports whether a directive's value must be redacted from
// logs and the slow log (requirepass, masterauth, masteruser).
func IsSensitive(name string) bool {
	e, ok := lookupEntry(name)
	return ok && table[e.dir].flags&flagSensitive != 0
}

// OnChange registers fn to run after a CONFIG SET changed the directive
// (either of its names), with the new value in CONFIG GET form. Hooks run
// in registration order while the Store's writer lock is held, so they see
// changes in order; they must not call Set or Rewrite.
func (s *Store) OnChange(name string, fn func(value string)) {
	i := mustDir(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange[i] = append(s.onChange[i], fn)
}

// OnApply registers fn to put a new value into effect before CONFIG SET
// succeeds (rebinding a port, resizing a pool), like Redis's apply
// functions. If it returns an error the whole CONFIG SET fails with it and
// the hooks that already ran are called again with their old values. The
// error text should be Redis's where one exists ("Unable to listen on this
// port. Check server logs."). Same locking rules as OnChange.
func (s *Store) OnApply(name string, fn func(value string) error) {
	i := mustDir(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onApply[i] = append(s.onApply[i], fn)
}

// groupHook is an OnApplyGroup registration.
type groupHook struct {
	dirs map[int]bool
	fn   func(get func(name string) string) error
}

// OnApplyGroup registers fn to put several directives into effect together, as Redis's shared
// apply functions do (the TLS context from every tls-* file option): it runs once per CONFIG
// SET that changed any of names, after the OnApply hooks, and get returns any directive's new
// value in CONFIG GET form. The error is reported against the first of names the CONFIG SET
// changed, and undoes the whole CONFIG SET as OnApply's does. Same locking rules as OnChange.
func (s *Store) OnApplyGroup(names []string, fn func(get func(name string) string) error) {
	g := groupHook{dirs: map[int]bool{}, fn: fn}
	for _, n := range names {
		g.dirs[mustDir(n)] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onGroup = append(s.onGroup, g)
}

// OnResetStat registers a function CONFIG RESETSTAT runs: the owners of
// INFO's counters, command and error statistics register their resets.
func (s *Store) OnResetStat(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onReset = append(s.onReset, fn)
}

// ResetStat runs the registered statistics resets (CONFIG RESETSTAT).
func (s *Store) ResetStat() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fn := range s.onReset {
		fn()
	}
}

// SetLoading marks the server as loading its dataset: CONFIG SET then
// refuses appendonly, dir and repl-diskless-load, as Redis does.
func (s *Store) SetLoading(loading bool) { s.loading.Store(loading) }

// Renames returns the config file's rename-command pairs (old, new; new ""
// removes the command), for the command table to apply and validate.
func (s *Store) Renames() [][2]string { return append([][2]string(nil), s.renames...) }

// Users returns the config file's user lines (arguments after "user"), for
// the ACL layer.
func (s *Store) Users() [][]string { return append([][]string(nil), s.users...) }

// SetUserLines gives CONFIG REWRITE the ACL users to write (see rewriteUsers).
func (s *Store) SetUserLines(fn func() []string) {
	s.mu.Lock()
	s.userLines = fn
	s.mu.Unlock()
}

// errorf builds the wire error for a failed CONFIG SET.
func setError(name, msg string) error {
	return errors.New("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + msg)
}
