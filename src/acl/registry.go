package acl

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Entry is a user as connections hold it: its current rules, replaced whole by SETUSER.
type Entry struct {
	Name    string
	cur     atomic.Pointer[User]
	deleted atomic.Bool
}

// User returns the user's current rules.
func (e *Entry) User() *User { return e.cur.Load() }

// Deleted reports whether the user was removed (DELUSER, ACL LOAD without it).
func (e *Entry) Deleted() bool { return e.deleted.Load() }

// Registry holds the users.
type Registry struct {
	cat *Catalog
	// pubsubAll is acl-pubsub-default: new users (and reset) get allchannels when set.
	pubsubAll atomic.Bool

	mu    sync.Mutex
	users map[string]*Entry
	def   *Entry
	Log   Log
}

// NewRegistry returns a registry holding only the default user, "on nopass ~* &* +@all".
func NewRegistry(cat *Catalog) *Registry {
	r := &Registry{cat: cat, users: map[string]*Entry{}}
	r.Log.max.Store(128)
	r.def = &Entry{Name: "default"}
	r.def.cur.Store(defaultUser(cat))
	r.users["default"] = r.def
	return r
}

func defaultUser(cat *Catalog) *User {
	u := newUser(cat, "default", false)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		if err := u.apply(op, false); err != nil {
			panic("BUG: default user: " + err.Error())
		}
	}
	u.refresh()
	return u
}

// Catalog returns the commands the registry's rules name.
func (r *Registry) Catalog() *Catalog { return r.cat }

// SetPubsubDefault sets acl-pubsub-default (true: allchannels).
func (r *Registry) SetPubsubDefault(all bool) { r.pubsubAll.Store(all) }

// Default returns the default user.
func (r *Registry) Default() *Entry { return r.def }

// Get returns a user by name, or nil.
func (r *Registry) Get(name string) *Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.users[name]
}

// Names returns the user names, sorted.
func (r *Registry) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.users))
	for n := range r.users {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// List returns one "user <name> <rules>" line per user, sorted by name (ACL LIST, ACL SAVE).
func (r *Registry) List() []string {
	var out []string
	for _, n := range r.Names() {
		if e := r.Get(n); e != nil {
			out = append(out, "user "+n+" "+e.User().Describe())
		}
	}
	return out
}

// RuleError is a refused SETUSER rule: Op is the rule as merged, Err the reason.
type RuleError struct {
	Op  string
	Err error
}

func (e *RuleError) Error() string { return fmt.Sprintf("'%s': %s", e.Op, e.Err) }

// Build applies ops (selectors already merged) to a copy of base, or to a new user when base is
// nil, without publishing it.
func (r *Registry) Build(name string, base *User, ops []string) (*User, error) {
	all := r.pubsubAll.Load()
	u := newUser(r.cat, name, all)
	if base != nil {
		u = base.clone()
	}
	for _, op := range ops {
		if err := u.apply(op, all); err != nil {
			return nil, &RuleError{Op: op, Err: err}
		}
	}
	u.refresh()
	return u, nil
}

// SetUser applies ops to the named user, creating it when absent; nothing changes on an error.
// It returns the user's rules before (nil when created) and after.
func (r *Registry) SetUser(name string, ops []string) (old, now *User, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.users[name]
	if e != nil {
		old = e.User()
	}
	now, err = r.Build(name, old, ops)
	if err != nil {
		return nil, nil, err
	}
	if e == nil {
		e = &Entry{Name: name}
		r.users[name] = e
	}
	e.cur.Store(now)
	return old, now, nil
}

// ErrDeleteDefault is DELUSER's refusal to remove the default user.
var ErrDeleteDefault = errors.New("ERR The 'default' user cannot be removed")

// Delete removes the named users and returns those that existed; the default user cannot go.
func (r *Registry) Delete(names []string) ([]*Entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		if n == "default" {
			return nil, ErrDeleteDefault
		}
	}
	var gone []*Entry
	for _, n := range names {
		if e := r.users[n]; e != nil {
			delete(r.users, n)
			e.deleted.Store(true)
			gone = append(gone, e)
		}
	}
	return gone, nil
}

// Authenticate returns the user that name and pass log in as, or nil.
func (r *Registry) Authenticate(name, pass []byte) *Entry {
	e := r.Get(string(name))
	if e == nil || !e.User().CheckPassword(pass) {
		return nil
	}
	return e
}

// SetDefaultPassword applies requirepass to the default user as Redis does
// (ACLUpdateDefaultUserPassword): resetpass, then >pass, or nopass when pass is empty.
func (r *Registry) SetDefaultPassword(pass string) {
	ops := []string{"resetpass", "nopass"}
	if pass != "" {
		ops[1] = ">" + pass
	}
	if _, _, err := r.SetUser("default", ops); err != nil {
		panic("BUG: requirepass: " + err.Error())
	}
}

// Users is a parsed set of user lines, ready to replace the registry's users (ACL LOAD, the
// aclfile at startup, the config file's user directives).
type Users map[string]*User

// ParseUsers parses "user <name> <rules...>" lines, each already split into arguments without
// the "user" word, as Redis's ACLLoadFromFile checks them. Errors name the line (1-based) as
// Redis does.
func (r *Registry) ParseUsers(lines [][]string, lineNos []int) (Users, error) {
	out := Users{}
	for i, argv := range lines {
		no := i + 1
		if lineNos != nil {
			no = lineNos[i]
		}
		if len(argv) < 1 {
			continue
		}
		name := argv[0]
		if hasSpaces(name) {
			return nil, fmt.Errorf("%d: Usernames can't contain spaces or null characters. ", no)
		}
		if out[name] != nil {
			return nil, fmt.Errorf("%d: Duplicate user '%s' found. ", no, name)
		}
		ops, bad, ok := MergeSelectors(argv[1:])
		if !ok {
			return nil, fmt.Errorf("%d: Unmatched parenthesis in acl selector starting at '%s'. ", no, argv[1+bad])
		}
		u, err := r.Build(name, nil, ops)
		if err != nil {
			var re *RuleError
			errors.As(err, &re)
			return nil, fmt.Errorf("%d: %s. ", no, re.Err)
		}
		out[name] = u
	}
	return out, nil
}

// Replace makes users the registry's users. The default user keeps its entry (its rules become
// the new ones, or Redis's defaults when users has none); every other old user is deleted and
// returned, so the caller disconnects its clients, as ACL LOAD does.
func (r *Registry) Replace(users Users) []*Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []*Entry
	for n, e := range r.users {
		if n != "default" {
			e.deleted.Store(true)
			gone = append(gone, e)
		}
	}
	r.users = map[string]*Entry{"default": r.def}
	for n, u := range users {
		if n == "default" {
			r.def.cur.Store(u)
			continue
		}
		e := &Entry{Name: n}
		e.cur.Store(u)
		r.users[n] = e
	}
	if users["default"] == nil {
		r.def.cur.Store(defaultUser(r.cat))
	}
	return gone
}

// FileText is the aclfile's content as ACL SAVE writes it.
func (r *Registry) FileText() string {
	var b strings.Builder
	for _, l := range r.List() {
		b.WriteString(l + "\n")
	}
	return b.String()
}
