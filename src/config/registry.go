package config

import "sort"

// entry is one name CONFIG answers to: a directive's own name or its alias.
// Redis treats the two as separate entries (CONFIG SET may name both in one
// call; CONFIG GET * lists both), so they are kept apart here too.
type entry struct {
	name  string // lower case
	dir   int    // index into table
	alias bool
}

type registryT struct {
	byName map[string]entry
	sorted []entry // by name: the order CONFIG GET patterns walk
	// table is the directive table again, for code the table itself
	// refers to (a direct reference would be an initialization cycle).
	table []*directive
	// defaults holds each directive's default value, dir excepted (it is
	// the working directory at the time a Store is made).
	defaults []value
	dirIndex int
}

// registry is built in init, not in a var initializer: checks in the table
// consult it, which Go would report as an initialization cycle.
var registry registryT

func init() {
	registry = buildRegistry(table)
}

func buildRegistry(t []*directive) registryT {
	r := registryT{byName: make(map[string]entry, 2*len(t)), dirIndex: -1, table: t}
	add := func(name string, i int, alias bool) {
		if _, dup := r.byName[name]; dup {
			panic("BUG: config directive registered twice: " + name)
		}
		e := entry{name: name, dir: i, alias: alias}
		r.byName[name] = e
		r.sorted = append(r.sorted, e)
	}
	for i, d := range t {
		add(d.name, i, false)
		if d.alias != "" {
			add(d.alias, i, true)
		}
		if d.name == "dir" {
			r.dirIndex = i
		}
	}
	sort.Slice(r.sorted, func(i, j int) bool { return r.sorted[i].name < r.sorted[j].name })
	r.defaults = make([]value, len(t))
	ctx := &setCtx{applyDir: true}
	for i, d := range t {
		if d.kind == kindSpecial && d.def == "" {
			continue // unset: dir, replicaof, notify-keyspace-events
		}
		v, msg := d.setArgs(ctx, value{}, d.splitDefault())
		if msg != "" {
			panic("BUG: bad default for " + d.name + ": " + msg)
		}
		r.defaults[i] = v
	}
	return r
}

// splitDefault turns the table's default into setter arguments.
func (d *directive) splitDefault() []string {
	if d.kind == kindSpecial || d.bitflags {
		return d.splitValue(d.def)
	}
	return []string{d.def}
}

// defaultValues returns a fresh copy of every directive's default.
func defaultValues() []value {
	vals := make([]value, len(registry.defaults))
	copy(vals, registry.defaults)
	if registry.dirIndex >= 0 {
		vals[registry.dirIndex] = value{s: getwd()}
	}
	return vals
}

// lookupEntry finds a name as CONFIG does: case-insensitively.
func lookupEntry(name string) (entry, bool) {
	e, ok := registry.byName[asciiLower(name)]
	return e, ok
}

// mustDir resolves a directive name for Go callers; an unknown name is a
// programming error.
func mustDir(name string) int {
	e, ok := lookupEntry(name)
	if !ok {
		panic("BUG: unknown config directive " + name)
	}
	return e.dir
}
