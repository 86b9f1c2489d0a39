package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// special is a directive with its own syntax: how it validates and stores
// its arguments, shows them to CONFIG GET and writes them on REWRITE.
type special struct {
	set     func(c *setCtx, cur value, args []string) (value, string)
	get     func(v value) string
	rewrite func(rw *rewriter, name string, v value)
}

func getS(v value) string { return v.s }

// dir: the working directory, where dbfilename and the AOF live. Loading
// the file changes directory at once (later relative includes see it);
// CONFIG SET only checks here and changes directory in its apply step.
var dirSpecial = &special{
	set: func(c *setCtx, _ value, args []string) (value, string) {
		if !c.applyDir {
			if err := os.Chdir(args[0]); err != nil {
				return value{}, strerror(err)
			}
			return value{s: getwd()}, ""
		}
		fi, err := os.Stat(args[0])
		if err != nil {
			return value{}, strerror(err)
		}
		if !fi.IsDir() {
			return value{}, "Not a directory"
		}
		abs, err := filepath.Abs(args[0])
		if err != nil {
			return value{}, strerror(err)
		}
		return value{s: abs}, ""
	},
	get: getS,
	rewrite: func(rw *rewriter, name string, v value) {
		if v.s == "" {
			rw.markProcessed(name)
			return
		}
		rw.rewriteLine(name, name+" "+Repr(v.s), true)
	},
}

func getwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}

// SaveParam is one "save <seconds> <changes>" snapshot trigger.
type SaveParam struct {
	Seconds int64
	Changes int
}

// save: pairs of seconds and changes. In the config file successive save
// lines add up (the first one drops the defaults); `save ""` clears.
var saveSpecial = &special{
	set: func(c *setCtx, cur value, args []string) (value, string) {
		reset := len(args) == 1 && args[0] == ""
		if reset {
			args = nil
		}
		const bad = "Invalid save parameters"
		if len(args)%2 != 0 {
			return value{}, bad
		}
		params := make([]SaveParam, 0, len(args)/2)
		for j := 0; j < len(args); j += 2 {
			secs, end1, _ := strtoll(args[j], 10)
			changes, end2, _ := strtoll(args[j+1], 10)
			if !end1 || !end2 || secs < 1 || changes < 0 {
				return value{}, bad
			}
			// Redis keeps changes in a C int.
			params = append(params, SaveParam{Seconds: secs, Changes: int(int32(changes))})
		}
		if c.loading && c.saveSeen && !reset {
			params = append(parseSave(cur.s), params...)
		}
		if c.loading {
			c.saveSeen = true
		}
		return value{s: formatSave(params)}, ""
	},
	get: getS,
	rewrite: func(rw *rewriter, name string, v value) {
		params := parseSave(v.s)
		if len(params) == 0 {
			rw.rewriteLine(name, `save ""`, true)
		}
		for _, p := range params {
			rw.rewriteLine(name, "save "+strconv.FormatInt(p.Seconds, 10)+" "+strconv.Itoa(p.Changes), true)
		}
		rw.markProcessed(name)
	},
}

func formatSave(params []SaveParam) string {
	parts := make([]string, 0, 2*len(params))
	for _, p := range params {
		parts = append(parts, strconv.FormatInt(p.Seconds, 10), strconv.Itoa(p.Changes))
	}
	return strings.Join(parts, " ")
}

// parseSave reads back what formatSave wrote.
func parseSave(s string) []SaveParam {
	f := strings.Fields(s)
	out := make([]SaveParam, 0, len(f)/2)
	for i := 0; i+1 < len(f); i += 2 {
		secs, _ := strconv.ParseInt(f[i], 10, 64)
		changes, _ := strconv.Atoi(f[i+1])
		out = append(out, SaveParam{Seconds: secs, Changes: changes})
	}
	return out
}

// maxBind is Redis's CONFIG_BINDADDR_MAX.
const maxBind = 16

// bind: the listen addresses. Whether they can be bound is the server's
// business (an OnApply hook), as in Redis's applyBind.
var bindSpecial = &special{
	set: func(_ *setCtx, _ value, args []string) (value, string) {
		if len(args) > maxBind {
			return value{}, "Too many bind addresses specified."
		}
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		return value{s: strings.Join(args, " ")}, ""
	},
	get: getS,
	rewrite: func(rw *rewriter, name string, v value) {
		if v.s == DefaultBind {
			rw.markProcessed(name)
			return
		}
		addrs := v.s
		if addrs == "" {
			addrs = `""`
		}
		rw.rewriteLine(name, name+" "+addrs, true)
	},
}

// replicaof: "<host> <port>", or "no one" for a master.
var replicaofSpecial = &special{
	set: func(_ *setCtx, _ value, args []string) (value, string) {
		if len(args) != 2 {
			return value{}, "wrong number of arguments"
		}
		if asciiLower(args[0]) == "no" && asciiLower(args[1]) == "one" {
			return value{}, ""
		}
		port, end, _ := strtoll(args[1], 10)
		p := int32(port) // Redis keeps the port in a C int
		if !end || p < 0 || p > 65535 {
			return value{}, "Invalid master port"
		}
		return value{s: args[0] + " " + strconv.Itoa(int(p))}, ""
	},
	get: getS,
	rewrite: func(rw *rewriter, name string, v value) {
		if v.s == "" || rw.lookup("cluster-enabled") == "yes" {
			rw.markProcessed(name)
			return
		}
		rw.rewriteLine(name, name+" "+v.s, true)
	},
}

// Keyspace notification classes, with Redis's bit values.
const (
	NotifyKeyspace = 1 << iota // K
	NotifyKeyevent             // E
	NotifyGeneric              // g
	NotifyString               // $
	NotifyList                 // l
	NotifySet                  // s
	NotifyHash                 // h
	NotifyZset                 // z
	NotifyExpired              // x
	NotifyEvicted              // e
	NotifyStream               // t
	NotifyKeyMiss              // m, not part of A
	NotifyLoaded               // modules only
	NotifyModule               // d
	NotifyNew                  // n, not part of A

	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
		NotifyZset | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

var notifyChars = []struct {
	c    byte
	flag int64
}{
	{'g', NotifyGeneric}, {'$', NotifyString}, {'l', NotifyList}, {'s', NotifySet},
	{'h', NotifyHash}, {'z', NotifyZset}, {'x', NotifyExpired}, {'e', NotifyEvicted},
	{'t', NotifyStream}, {'d', NotifyModule}, {'n', NotifyNew},
}

var notifySpecial = &special{
	set: func(_ *setCtx, _ value, args []string) (value, string) {
		if len(args) != 1 {
			return value{}, "wrong number of arguments"
		}
		n, ok := parseNotify(args[0])
		if !ok {
			return value{}, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
		}
		return value{n: n}, ""
	},
	get: func(v value) string { return formatNotify(v.n) },
	rewrite: func(rw *rewriter, name string, v value) {
		rw.rewriteLine(name, name+" "+Repr(formatNotify(v.n)), v.n != 0)
	},
}

func parseNotify(s string) (int64, bool) {
	var n int64
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 'A':
			n |= NotifyAll
		case 'K':
			n |= NotifyKeyspace
		case 'E':
			n |= NotifyKeyevent
		case 'm':
			n |= NotifyKeyMiss
		default:
			found := false
			for _, nc := range notifyChars {
				if nc.c == c {
					n |= nc.flag
					found = true
				}
			}
			if !found {
				return 0, false
			}
		}
	}
	return n, true
}

// formatNotify is Redis's keyspaceEventsFlagsToString: "A" hides the
// classes it covers, and also 'n', which A does not include.
func formatNotify(n int64) string {
	var b []byte
	if n&NotifyAll == NotifyAll {
		b = append(b, 'A')
	} else {
		for _, nc := range notifyChars {
			if n&nc.flag != 0 {
				b = append(b, nc.c)
			}
		}
	}
	if n&NotifyKeyspace != 0 {
		b = append(b, 'K')
	}
	if n&NotifyKeyevent != 0 {
		b = append(b, 'E')
	}
	if n&NotifyKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}
