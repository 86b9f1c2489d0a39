package acl

import (
	"math"
	"strings"
)

// describe appends the selector as ACL LIST prints it (Redis's ACLDescribeSelector).
func (s *Selector) describe(b *strings.Builder) {
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			k.describe(b)
			b.WriteByte(' ')
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.CommandRules())
}

func (k KeyPattern) describe(b *strings.Builder) {
	switch k.Perm {
	case Read:
		b.WriteString("%R~")
	case Write:
		b.WriteString("%W~")
	default:
		b.WriteString("~")
	}
	b.WriteString(k.Pattern)
}

// KeysString is GETUSER's "keys" field: "~*", or the patterns separated by spaces.
func (s *Selector) KeysString() string {
	if s.allKeys {
		return "~*"
	}
	var b strings.Builder
	for i, k := range s.keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		k.describe(&b)
	}
	return b.String()
}

// ChannelsString is GETUSER's "channels" field.
func (s *Selector) ChannelsString() string {
	if s.allChannels {
		return "&*"
	}
	var b strings.Builder
	for i, c := range s.channels {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("&" + c)
	}
	return b.String()
}

// CommandRules describes the selector's command permissions as Redis 7.0 does
// (ACLDescribeSelectorCommandRules): +@all or -@all, then the categories that best approximate
// the bitmap, chosen greedily, then single commands and first arguments for the rest. Replaying
// the result gives the same bitmap. Redis emits the single commands in its command dictionary's
// order, which changes with its hash seed; HotKV emits them in name order.
func (s *Selector) CommandRules() string {
	var b strings.Builder
	fake := newSelector(s.cat, false, false)
	additive := !s.bit(s.cat.futureBit())
	if additive {
		b.WriteString("-@all ")
	} else {
		b.WriteString("+@all ")
		fake.setAll(true)
	}
	temp := &Selector{cat: s.cat, bits: append([]uint64(nil), s.bits...)}
	for {
		best, minDiff, maxSame := -1, uint64(math.MaxInt32), uint64(0)
		for j := range Categories {
			on, off := temp.countCategory(1 << j)
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < minDiff || (diff == minDiff && same > maxSame)) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		fake.setCategory(1<<best, additive)
		temp.setCategory(1<<best, !additive)
		if additive {
			b.WriteString("+@")
		} else {
			b.WriteString("-@")
		}
		b.WriteString(Categories[best] + " ")
	}
	for _, c := range s.cat.top {
		s.singles(&b, fake, c)
		for _, sub := range c.Subs {
			s.singles(&b, fake, sub)
		}
	}
	out := b.String()
	out = out[:len(out)-1]
	for id := range s.cat.size {
		if fake.bit(id) != s.bit(id) {
			panic("BUG: described ACL rules do not reproduce the selector: " + out)
		}
	}
	return out
}

func (s *Selector) countCategory(bit uint32) (on, off uint64) {
	s.cat.each(func(c *Cmd) {
		if c.Redis && c.Cats&bit != 0 {
			if s.bit(c.ID) {
				on++
			} else {
				off++
			}
		}
	})
	return on, off
}

func (s *Selector) singles(b *strings.Builder, fake *Selector, c *Cmd) {
	if want := s.bit(c.ID); want != fake.bit(c.ID) {
		if want {
			b.WriteString("+")
		} else {
			b.WriteString("-")
		}
		b.WriteString(c.Name + " ")
		fake.changePerm(c, want)
	}
	if !s.bit(c.ID) {
		for _, a := range s.first[c.ID] {
			b.WriteString("+" + c.Name + "|" + a + " ")
		}
	}
}
