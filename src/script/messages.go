package script

import (
	"regexp"
	"strings"
)

// gopher-lua words some runtime errors differently from Lua 5.1. luaMessage rewrites the forms
// that map one to one onto Lua's text when Lua has no variable name to add (Lua's "attempt to
// index local 't' (a nil value)" names the variable; gopher-lua's message cannot tell which
// variable it was, so those stay apart):
//
//	bad argument #1 to rep (...)                      -> bad argument #1 to 'rep' (...)
//	bad argument #1 to (anonymous) (...)              -> bad argument #1 to '?' (...)
//	cannot perform add operation between nil and number -> attempt to perform arithmetic on a nil value
//	attempt to index a non-table object(nil) with key 'x' -> attempt to index a nil value
var (
	reBadArg = regexp.MustCompile(`bad argument #(\d+) to ([^ '(][^ ]*) \(`)
	reArith  = regexp.MustCompile(`cannot perform (add|sub|mul|div|mod|pow|unm) operation between (\w+) and (\w+)`)
	reIndex  = regexp.MustCompile(`attempt to index a non-table object\((\w+)\) with key '[^']*'`)
)

func luaMessage(s string) string {
	if !strings.Contains(s, "bad argument") && !strings.Contains(s, "cannot perform") && !strings.Contains(s, "non-table object") {
		return s
	}
	s = strings.ReplaceAll(s, " to (anonymous) (", " to '?' (")
	s = reBadArg.ReplaceAllString(s, "bad argument #$1 to '$2' (")
	s = reArith.ReplaceAllStringFunc(s, func(m string) string {
		p := reArith.FindStringSubmatch(m)
		bad := p[2]
		if bad == "number" {
			bad = p[3]
		}
		return "attempt to perform arithmetic on a " + bad + " value"
	})
	return reIndex.ReplaceAllString(s, "attempt to index a $1 value")
}
