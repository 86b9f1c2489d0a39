package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"slices"
	"strings"
)

// User flags, in the order ACL LIST prints them.
const (
	flagOn uint8 = 1 << iota
	flagOff
	flagNoPass
	flagSkipSanitize
	flagSanitize
)

var flagNames = []string{"on", "off", "nopass", "skip-sanitize-payload", "sanitize-payload"}

// User is one user's rules. A published User is never changed: SETUSER changes a copy.
type User struct {
	Name      string
	flags     uint8
	passwords []string // SHA-256 hex digests, in the order they were added
	selectors []*Selector
	// unrestricted: one selector allowing every command, key and channel, so a check costs
	// nothing (the default user's common case).
	unrestricted bool
}

func newUser(cat *Catalog, name string, allChannels bool) *User {
	u := &User{Name: name, flags: flagOff}
	u.selectors = []*Selector{newSelector(cat, true, allChannels)}
	u.refresh()
	return u
}

func (u *User) clone() *User {
	n := *u
	n.passwords = slices.Clone(u.passwords)
	n.selectors = make([]*Selector, len(u.selectors))
	for i, s := range u.selectors {
		n.selectors[i] = s.clone()
	}
	return &n
}

func (u *User) refresh() {
	r := u.selectors[0]
	u.unrestricted = len(u.selectors) == 1 && r.allCommands && r.allKeys && r.allChannels
}

// Unrestricted reports whether the user may run everything on any key and channel.
func (u *User) Unrestricted() bool { return u.unrestricted }

// Enabled reports whether the user is on.
func (u *User) Enabled() bool { return u.flags&flagOn != 0 }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.flags&flagNoPass != 0 }

// Selectors returns the root selector first, then the others.
func (u *User) Selectors() []*Selector { return u.selectors }

// Passwords returns the SHA-256 hex digests of the user's passwords.
func (u *User) Passwords() []string { return u.passwords }

// Flags returns the flag names GETUSER lists.
func (u *User) Flags() []string {
	var out []string
	for i, n := range flagNames {
		if u.flags&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// CheckPassword reports whether pass authenticates the enabled user, comparing digests in
// constant time.
func (u *User) CheckPassword(pass []byte) bool {
	if u.flags&flagOn == 0 {
		return false
	}
	if u.flags&flagNoPass != 0 {
		return true
	}
	sum := sha256.Sum256(pass)
	var got [64]byte
	hex.Encode(got[:], sum[:])
	ok := 0
	for _, p := range u.passwords {
		ok |= subtle.ConstantTimeCompare(got[:], []byte(p))
	}
	return ok == 1
}

// HashPassword returns a password's SHA-256 hex digest, as ACL files store it.
func HashPassword(pass []byte) string {
	sum := sha256.Sum256(pass)
	return hex.EncodeToString(sum[:])
}

// Describe is the user's rules as ACL LIST and ACL SAVE print them, after "user <name> ".
func (u *User) Describe() string {
	var b strings.Builder
	for i, n := range flagNames {
		if u.flags&(1<<i) != 0 {
			b.WriteString(n + " ")
		}
	}
	for _, p := range u.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, s := range u.selectors {
		if s.root {
			s.describe(&b)
			continue
		}
		b.WriteString(" (")
		s.describe(&b)
		b.WriteString(")")
	}
	return b.String()
}

// apply applies one SETUSER rule to u (Redis's ACLSetUser); u is not yet published.
func (u *User) apply(op string, allChannels bool) error {
	if op == "" {
		return nil
	}
	switch {
	case strings.EqualFold(op, "on"):
		u.flags = u.flags&^flagOff | flagOn
	case strings.EqualFold(op, "off"):
		u.flags = u.flags&^flagOn | flagOff
	case strings.EqualFold(op, "skip-sanitize-payload"):
		u.flags = u.flags&^flagSanitize | flagSkipSanitize
	case strings.EqualFold(op, "sanitize-payload"):
		u.flags = u.flags&^flagSkipSanitize | flagSanitize
	case strings.EqualFold(op, "nopass"):
		u.flags |= flagNoPass
		u.passwords = nil
	case strings.EqualFold(op, "resetpass"):
		u.flags &^= flagNoPass
		u.passwords = nil
	case op[0] == '>' || op[0] == '#':
		h := op[1:]
		if op[0] == '>' {
			h = HashPassword([]byte(op[1:]))
		} else if !validHash(h) {
			return ErrBadHash
		}
		if !slices.Contains(u.passwords, h) {
			u.passwords = append(u.passwords, h)
		}
		u.flags &^= flagNoPass
	case op[0] == '<' || op[0] == '!':
		h := op[1:]
		if op[0] == '<' {
			h = HashPassword([]byte(op[1:]))
		} else if !validHash(h) {
			return ErrBadHash
		}
		i := slices.Index(u.passwords, h)
		if i < 0 {
			return ErrNoSuchPass
		}
		u.passwords = slices.Delete(u.passwords, i, i+1)
	case op[0] == '(' && op[len(op)-1] == ')':
		s, err := selectorFromOps(u.selectors[0].cat, op, allChannels)
		if err != nil {
			return err
		}
		u.selectors = append(u.selectors, s)
	case strings.EqualFold(op, "clearselectors"):
		u.selectors = u.selectors[:1]
	case strings.EqualFold(op, "reset"):
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels"} {
			_ = u.apply(r, allChannels)
		}
		if allChannels {
			_ = u.apply("allchannels", allChannels)
		}
		for _, r := range []string{"off", "sanitize-payload", "clearselectors", "-@all"} {
			_ = u.apply(r, allChannels)
		}
	default:
		return u.selectors[0].apply(op)
	}
	return nil
}

// validHash is Redis's ACLCheckPasswordHash: 64 lower-case hex digits.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// MergeSelectors joins the arguments of a "(...)" selector split over several arguments into
// one, as Redis's ACLMergeSelectorArguments; bad is the index of an unclosed "(" (ok false).
func MergeSelectors(args []string) (out []string, bad int, ok bool) {
	open := -1
	var cur string
	for j, op := range args {
		if open < 0 && strings.HasPrefix(op, "(") && !strings.HasSuffix(op, ")") {
			open, cur = j, op
			continue
		}
		if open >= 0 {
			cur += " " + op
			if strings.HasSuffix(op, ")") {
				open = -1
				out = append(out, cur)
			}
			continue
		}
		out = append(out, op)
	}
	if open >= 0 {
		return nil, open, false
	}
	return out, 0, true
}
