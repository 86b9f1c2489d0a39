package acl

import (
	"errors"
	"slices"
	"strings"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/src/config"
)

// Perm is what a key pattern allows: reading, writing or both.
type Perm uint8

// The key permissions (%R~, %W~, %RW~ and ~).
const (
	Read  Perm = 1
	Write Perm = 2
	All        = Read | Write
)

// KeyPattern is one key pattern of a selector.
type KeyPattern struct {
	Pattern string
	Perm    Perm
	raw     []byte // Pattern's bytes, so matching converts nothing
	m       matcher
}

// matcher matches one glob pattern, with a fast path for the shapes ACL patterns usually have:
// a literal, a literal prefix then '*', or '*'. Anything else goes through strs.Glob.
type matcher struct {
	kind uint8 // matchGlob, matchExact, matchPrefix, matchAny
	lit  []byte
	pat  []byte
}

const (
	matchGlob uint8 = iota
	matchExact
	matchPrefix
	matchAny
)

func newMatcher(pat []byte) matcher {
	m := matcher{pat: pat}
	body := pat
	if n := len(pat); n > 0 && pat[n-1] == '*' {
		body = pat[:n-1]
	}
	for _, c := range body {
		if c == '*' || c == '?' || c == '[' || c == '\\' {
			return m
		}
	}
	switch {
	case len(body) == len(pat):
		m.kind = matchExact
	case len(body) == 0:
		m.kind = matchAny
	default:
		m.kind = matchPrefix
	}
	m.lit = body
	return m
}

func (m *matcher) match(s []byte) bool {
	switch m.kind {
	case matchExact:
		return string(s) == string(m.lit)
	case matchPrefix:
		return len(s) >= len(m.lit) && string(s[:len(m.lit)]) == string(m.lit)
	case matchAny:
		return len(s) > 0 // Redis's stringmatchlen: "*" does not match ""
	}
	return strs.Glob(m.pat, s, false)
}

// The reasons a rule is refused, as Redis's ACLSetUserStringError words them.
var (
	ErrSyntax       = errors.New("Syntax error")
	ErrUnknown      = errors.New("Unknown command or category name in ACL")
	ErrKeyAfterAll  = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	ErrChanAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	ErrNoSuchPass   = errors.New("The password you are trying to remove from the user does not exist")
	ErrBadHash      = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	ErrDuplicate    = errors.New("Duplicate user found. A user can only be defined once in config files")
	ErrSubFirstArg  = errors.New("Allowing first-arg of a subcommand is not supported")
)

// Selector is one set of permissions of a user: the root one, or a "(...)" selector. A user may
// run a command when any of its selectors allows the command, every key and every channel.
type Selector struct {
	cat         *Catalog
	root        bool
	allCommands bool // Redis's SELECTOR_FLAG_ALLCOMMANDS: no bit is cleared
	allKeys     bool
	allChannels bool
	bits        []uint64
	first       map[int][]string // first arguments allowed of an otherwise denied command
	keys        []KeyPattern
	channels    []string
	chanRaw     [][]byte  // channels' bytes
	chanM       []matcher // channels' matchers
}

func newSelector(cat *Catalog, root, allChannels bool) *Selector {
	return &Selector{cat: cat, root: root, allChannels: allChannels, bits: make([]uint64, cat.words())}
}

func (s *Selector) clone() *Selector {
	n := *s
	n.bits = slices.Clone(s.bits)
	n.keys = slices.Clone(s.keys)
	n.channels = slices.Clone(s.channels)
	n.chanRaw = slices.Clone(s.chanRaw)
	n.chanM = slices.Clone(s.chanM)
	if s.first != nil {
		n.first = make(map[int][]string, len(s.first))
		for k, v := range s.first {
			n.first[k] = slices.Clone(v)
		}
	}
	return &n
}

func (s *Selector) bit(id int) bool { return s.bits[id/64]&(1<<(id%64)) != 0 }

func (s *Selector) setBit(id int, on bool) {
	if on {
		s.bits[id/64] |= 1 << (id % 64)
	} else {
		s.bits[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// changePerm allows or denies a command and, for a container, all its subcommands (Redis's
// ACLChangeSelectorPerm); the command's allowed first arguments are dropped.
func (s *Selector) changePerm(c *Cmd, allow bool) {
	s.setBit(c.ID, allow)
	delete(s.first, c.ID)
	for _, sub := range c.Subs {
		s.setBit(sub.ID, allow)
	}
}

func (s *Selector) setCategory(bit uint32, allow bool) {
	s.cat.each(func(c *Cmd) {
		if c.Cats&bit != 0 {
			s.changePerm(c, allow)
		}
	})
}

func (s *Selector) setAll(allow bool) {
	var w uint64
	if allow {
		w = ^uint64(0)
	}
	for i := range s.bits {
		s.bits[i] = w
	}
	s.allCommands, s.first = allow, nil
}

// apply applies one selector rule (Redis's ACLSetSelector).
func (s *Selector) apply(op string) error {
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.allKeys, s.keys = true, nil
	case strings.EqualFold(op, "resetkeys"):
		s.allKeys, s.keys = false, nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.allChannels, s.channels, s.chanRaw, s.chanM = true, nil, nil, nil
	case strings.EqualFold(op, "resetchannels"):
		s.allChannels, s.channels, s.chanRaw, s.chanM = false, nil, nil, nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		s.setAll(true)
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		s.setAll(false)
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		return s.addChannel(op[1:])
	case (op[0] == '+' || op[0] == '-') && len(op) > 1 && op[1] == '@':
		bit := CategoryBit(op[2:])
		if bit == 0 {
			return ErrUnknown
		}
		s.setCategory(bit, op[0] == '+')
	case op[0] == '+':
		return s.allowCommand(op[1:])
	case op[0] == '-':
		c := s.cat.Lookup(op[1:])
		if c == nil {
			return ErrUnknown
		}
		s.changePerm(c, false)
	default:
		return ErrSyntax
	}
	return nil
}

func (s *Selector) addKeyPattern(op string) error {
	if s.allKeys {
		return ErrKeyAfterAll
	}
	perm, off := All, 1
	if op[0] == '%' {
		perm = 0
		for ; off < len(op); off++ {
			switch ch := op[off]; {
			case (ch == 'R' || ch == 'r') && perm&Read == 0:
				perm |= Read
				continue
			case (ch == 'W' || ch == 'w') && perm&Write == 0:
				perm |= Write
				continue
			case ch == '~':
				off++
			default:
				return ErrSyntax
			}
			break
		}
	}
	pat := op[min(off, len(op)):]
	if hasSpaces(pat) {
		return ErrSyntax
	}
	if i := slices.IndexFunc(s.keys, func(k KeyPattern) bool { return k.Pattern == pat }); i >= 0 {
		s.keys[i].Perm |= perm
	} else {
		s.keys = append(s.keys, KeyPattern{Pattern: pat, Perm: perm, raw: []byte(pat), m: newMatcher([]byte(pat))})
	}
	s.allKeys = false
	return nil
}

func (s *Selector) addChannel(pat string) error {
	if s.allChannels {
		return ErrChanAfterAll
	}
	if hasSpaces(pat) {
		return ErrSyntax
	}
	if !slices.Contains(s.channels, pat) {
		s.channels = append(s.channels, pat)
		s.chanRaw = append(s.chanRaw, []byte(pat))
		s.chanM = append(s.chanM, newMatcher([]byte(pat)))
	}
	s.allChannels = false
	return nil
}

// allowCommand is +cmd, +container|sub, and +cmd|firstarg for a command without subcommands.
func (s *Selector) allowCommand(name string) error {
	i := strings.LastIndexByte(name, '|')
	if i < 0 {
		c := s.cat.Lookup(name)
		if c == nil {
			return ErrUnknown
		}
		s.changePerm(c, true)
		return nil
	}
	c := s.cat.Lookup(name[:i])
	switch {
	case c == nil:
		return ErrUnknown
	case c.Parent != nil:
		return ErrSubFirstArg
	case i == len(name)-1:
		return ErrSyntax
	case len(c.Subs) > 0:
		sub := s.cat.Lookup(name)
		if sub == nil {
			return ErrUnknown
		}
		s.changePerm(sub, true)
	default:
		arg := name[i+1:]
		if !slices.ContainsFunc(s.first[c.ID], func(a string) bool { return strings.EqualFold(a, arg) }) {
			if s.first == nil {
				s.first = map[int][]string{}
			}
			s.first[c.ID] = append(s.first[c.ID], arg)
		}
	}
	return nil
}

// hasSpaces is Redis's ACLStringHasSpaces: a space character or NUL.
func hasSpaces(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return r == 0 || r == ' ' || (r >= '\t' && r <= '\r')
	})
}

// selectorFromOps builds a "(...)" selector (Redis's aclCreateSelectorFromOpSet).
func selectorFromOps(cat *Catalog, op string, allChannels bool) (*Selector, error) {
	s := newSelector(cat, false, allChannels)
	args, ok := config.SplitArgs(op[1 : len(op)-1])
	if !ok {
		return nil, ErrSyntax
	}
	for _, a := range args {
		if a == "" {
			continue
		}
		if err := s.apply(a); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// AllowsCommand reports whether the selector allows command c called with args (Redis's
// ACLSelectorCheckCmd, command part): args[1] is checked against the allowed first arguments.
func (s *Selector) AllowsCommand(c *Cmd, args [][]byte) bool {
	if s.allCommands || c.NoAuth || s.bit(c.ID) {
		return true
	}
	if len(args) < 2 || c.Parent != nil {
		return false
	}
	for _, a := range s.first[c.ID] {
		if strs.EqualFold(args[1], a) {
			return true
		}
	}
	return false
}

// AllKeys reports whether the selector allows every key.
func (s *Selector) AllKeys() bool { return s.allKeys }

// AllChannels reports whether the selector allows every channel.
func (s *Selector) AllChannels() bool { return s.allChannels }

// AllowsKey reports whether a pattern with at least perm matches key (case-sensitive glob).
func (s *Selector) AllowsKey(key []byte, perm Perm) bool {
	if s.allKeys {
		return true
	}
	for _, p := range s.keys {
		if p.Perm&perm == perm && p.m.match(key) {
			return true
		}
	}
	return false
}

// AllowsChannel reports whether channel may be used: a channel is matched against the patterns,
// a PSUBSCRIBE pattern (isPattern) must equal one of them literally.
func (s *Selector) AllowsChannel(ch []byte, isPattern bool) bool {
	if s.allChannels {
		return true
	}
	for i, p := range s.chanRaw {
		if (isPattern && string(p) == string(ch)) || (!isPattern && s.chanM[i].match(ch)) {
			return true
		}
	}
	return false
}
