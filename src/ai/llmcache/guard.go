package llmcache

import (
	"bytes"
	"slices"
	"strings"
)

// Guards reject a semantic hit whose prompt differs from the cached one in a way similarity
// scores miss: "What is 1+1?" against "What is 21+1?", "enable 2FA" against "disable 2FA".
type Guard uint8

const (
	// GuardNumbers: the multisets of digit numbers in the two prompts must be equal. A number
	// is a maximal run of digits with single '.' or ',' between digits ("1,000" is 1000; "3.14"
	// stays), with leading zeros dropped. Number words (numberWords) are compared as a second
	// multiset only when both prompts have some: "one plus one" against "one plus two" differs,
	// "one of the best" against "among the best" (a paraphrase dropping the word) does not.
	GuardNumbers Guard = 1 << iota
	// GuardNegation: the parity of negations (negationWords; "don't" counts as "dont") must be
	// equal, and for no antonym pair (antonyms) may the two prompts lean opposite ways:
	// sign(count(a) - count(b)) of +1 against -1, counting inflections (enable, enables, enabled,
	// enabling). A word one prompt has and the other lacks (a paraphrase) does not reject.
	GuardNegation
)

// numberWords are the spelled-out numbers GuardNumbers counts as numbers.
var numberWords = set("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
	"nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
	"hundred", "thousand", "million", "billion", "trillion")

// negationWords flip a prompt's polarity.
var negationWords = set("not", "no", "never", "none", "nothing", "nobody", "nowhere", "neither",
	"nor", "without", "cannot", "cant", "dont", "doesnt", "didnt", "wont", "isnt", "arent", "wasnt",
	"werent", "shouldnt", "wouldnt", "couldnt", "hasnt", "havent", "hadnt", "mustnt", "neednt")

// antonyms are pairs of words of opposite intent; a prompt leaning to one side does not match one
// leaning to the other.
var antonyms = [][2]string{
	{"enable", "disable"}, {"add", "remove"}, {"allow", "deny"}, {"allow", "block"},
	{"open", "close"}, {"start", "stop"}, {"increase", "decrease"}, {"on", "off"},
	{"buy", "sell"}, {"upload", "download"}, {"import", "export"}, {"encrypt", "decrypt"},
	{"lock", "unlock"}, {"show", "hide"}, {"include", "exclude"}, {"accept", "reject"},
	{"connect", "disconnect"}, {"install", "uninstall"}, {"subscribe", "unsubscribe"},
	{"activate", "deactivate"}, {"maximum", "minimum"}, {"max", "min"}, {"before", "after"},
	{"above", "below"}, {"more", "less"}, {"best", "worst"}, {"push", "pull"}, {"login", "logout"},
	{"create", "delete"}, {"win", "lose"}, {"true", "false"}, {"yes", "no"}, {"import", "export"},
	{"mount", "unmount"}, {"freeze", "unfreeze"}, {"follow", "unfollow"}, {"like", "dislike"},
	{"grant", "revoke"}, {"encode", "decode"}, {"compress", "decompress"}, {"zip", "unzip"},
	{"pro", "con"}, {"advantage", "disadvantage"}, {"safe", "unsafe"}, {"legal", "illegal"},
	{"possible", "impossible"}, {"happy", "sad"}, {"cheap", "expensive"}, {"fast", "slow"},
	{"hot", "cold"}, {"up", "down"}, {"higher", "lower"}, {"larger", "smaller"}, {"bigger", "smaller"},
	{"male", "female"}, {"men", "women"}, {"man", "woman"}, {"boy", "girl"}, {"past", "future"},
}

func set(ws ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(ws))
	for _, w := range ws {
		m[w] = struct{}{}
	}
	return m
}

// Features are what the guards compare, computed once per prompt.
type Features struct {
	Numbers []string // digit numbers, sorted
	Words   []string // number words, sorted
	Neg     bool     // odd number of negations
	Lean    []int8   // per antonym pair: -1, 0, +1
}

// Extract computes a normalized prompt's guard features.
func Extract(norm []byte) Features {
	var f Features
	f.Numbers = numbers(norm)
	neg := 0
	lean := make([]int, len(antonyms))
	ws := words(norm)
	if len(ws) > 0 && ws[0] == "no" && len(norm) > 2 && (norm[2] == ',' || norm[2] == '.' || norm[2] == '!') {
		ws = ws[1:] // "No, it doesn't …": an answer's interjection, not a negation of the question
	}
	for _, w := range ws {
		if _, ok := numberWords[w]; ok {
			f.Words = append(f.Words, w)
		}
		if _, ok := negationWords[w]; ok {
			neg++
		}
		for i, p := range antonyms {
			if inflects(w, p[0]) {
				lean[i]++
			} else if inflects(w, p[1]) {
				lean[i]--
			}
		}
	}
	slices.Sort(f.Numbers)
	slices.Sort(f.Words)
	f.Neg = neg%2 == 1
	for i, l := range lean {
		if l != 0 {
			if f.Lean == nil {
				f.Lean = make([]int8, len(antonyms))
			}
			f.Lean[i] = int8(max(-1, min(1, l)))
		}
	}
	return f
}

// Pass reports whether a semantic hit between prompts of features a and b passes guards g.
func Pass(g Guard, a, b *Features) bool {
	if g&GuardNumbers != 0 && (!slices.Equal(a.Numbers, b.Numbers) ||
		len(a.Words) > 0 && len(b.Words) > 0 && !slices.Equal(a.Words, b.Words)) {
		return false
	}
	if g&GuardNegation != 0 {
		if a.Neg != b.Neg {
			return false
		}
		for i := range antonyms {
			if leanAt(a, i)*leanAt(b, i) < 0 {
				return false
			}
		}
	}
	return true
}

func leanAt(f *Features, i int) int8 {
	if f.Lean == nil {
		return 0
	}
	return f.Lean[i]
}

// inflects reports whether w is base or a regular inflection of it.
func inflects(w, base string) bool {
	if !strings.HasPrefix(w, base) {
		if strings.HasSuffix(base, "e") && w == base[:len(base)-1]+"ing" {
			return true
		}
		return false
	}
	switch w[len(base):] {
	case "", "s", "d", "ed", "es", "ing", "er", "ers":
		return true
	}
	return false
}

// words splits a normalized prompt into lower-case words of letters and digits; apostrophes are
// dropped inside a word ("don't" is "dont").
func words(norm []byte) []string {
	var out []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(norm); i++ {
		b := norm[i]
		switch {
		case b == 0xE2 && i+2 < len(norm) && norm[i+1] == 0x80 && norm[i+2] == 0x99 && len(cur) > 0:
			i += 2 // U+2019, the typographic apostrophe: "doesn’t" is "doesnt" too
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9', b >= 0x80:
			cur = append(cur, b)
		case b == '\'' && len(cur) > 0:
		default:
			flush()
		}
	}
	flush()
	return out
}

// numbers returns the digit numbers of a prompt (see GuardNumbers).
func numbers(norm []byte) []string {
	var out []string
	isDigit := func(i int) bool { return i >= 0 && i < len(norm) && norm[i] >= '0' && norm[i] <= '9' }
	for i := 0; i < len(norm); {
		if !isDigit(i) {
			i++
			continue
		}
		var num []byte
		for i < len(norm) {
			switch {
			case isDigit(i):
				num = append(num, norm[i])
			case (norm[i] == '.' || norm[i] == ',') && isDigit(i-1) && isDigit(i+1):
				if norm[i] == '.' {
					num = append(num, '.')
				}
			default:
				goto done
			}
			i++
		}
	done:
		if t := bytes.TrimLeft(num, "0"); len(t) == 0 || t[0] == '.' {
			num = append([]byte{'0'}, t...)
		} else {
			num = t
		}
		out = append(out, string(num))
	}
	return out
}
