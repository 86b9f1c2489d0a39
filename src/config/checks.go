package config

import (
	"strconv"
	"strings"
)

// Extra validation of single directives, with Redis 7.0.15's messages.

// checkHostname is Redis's isValidAnnouncedHostname.
func checkHostname(_ *setCtx, v string) string {
	if len(v) >= 256 {
		return "Hostnames must be less than 256 characters"
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "Hostnames may only contain alphanumeric characters, hyphens or dots"
		}
	}
	return ""
}

// checkBaseName refuses paths where Redis wants a bare file name (the data
// directory is set by dir). dbfilename may be empty; the AOF names may not.
func checkBaseName(name, what string) func(*setCtx, string) string {
	return func(_ *setCtx, v string) string {
		if v == "" && name != "dbfilename" {
			return name + " can't be empty"
		}
		if strings.ContainsAny(v, "/\\") {
			return name + " can't be a path, just a " + what
		}
		return ""
	}
}

// checkShutdownFlags is Redis's isValidShutdownOnSigFlags.
func checkShutdownFlags(n int64) string {
	const save, nosave = 1, 2
	if n&save != 0 && n&nosave != 0 {
		return "shutdown options SAVE and NOSAVE can't be used simultaneously"
	}
	return ""
}

// checkProcTitle is Redis's validateProcTitleTemplate: the template must
// expand (known {variables}, balanced braces, "{{" for a brace) to something
// other than blanks, the title itself counting as empty.
func checkProcTitle(c *setCtx, v string) string {
	const bad = "template format is invalid or contains unknown variables"
	out, ok := expandProcTitle(v, func(name string) (string, bool) {
		switch name {
		case "title", "server-mode":
			return "", true // standalone mode has no mode tag
		case "listen-addr", "port", "tls-port":
			return "x", true // never empty in Redis
		case "unixsocket":
			return c.lookup("unixsocket"), true
		case "config-file":
			return c.file, true
		}
		return "", false
	})
	if !ok || strings.Trim(out, " ") == "" {
		return bad
	}
	return ""
}

// expandProcTitle is Redis's sdstemplate.
func expandProcTitle(t string, vars func(string) (string, bool)) (string, bool) {
	var b strings.Builder
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			break
		}
		b.WriteString(t[:i])
		t = t[i+1:]
		if t == "" {
			return "", false
		}
		if t[0] == '{' {
			b.WriteByte('{')
			t = t[1:]
			continue
		}
		j := strings.IndexByte(t, '}')
		if j < 0 {
			return "", false
		}
		val, ok := vars(t[:j])
		if !ok {
			return "", false
		}
		b.WriteString(val)
		t = t[j+1:]
	}
	return b.String(), true
}

// lookup reads another directive's CONFIG GET value from the values being
// built, for checks that depend on it.
func (c *setCtx) lookup(name string) string {
	e, ok := registry.byName[name]
	if !ok || c.vals == nil {
		return ""
	}
	return registry.table[e.dir].get(c.vals[e.dir])
}

// parseFloat is Redis's string2d: strtod over the whole string, no leading
// blank, no NaN, no overflow to infinity or underflow to zero.
func parseFloat(s string) (float64, bool) {
	if s == "" || isSpace(s[0]) || strings.ContainsRune(s, '_') {
		return 0, false
	}
	body := strings.TrimLeft(s, "+-")
	hex := len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	in := s
	if hex && !strings.ContainsAny(body, "pP") {
		in += "p0" // strtod reads hex without an exponent; Go wants one
	}
	f, err := strconv.ParseFloat(in, 64)
	if err != nil || f != f {
		return 0, false
	}
	if f == 0 && !hex {
		// strtod flags underflow to zero as an error; Go silently rounds.
		mant, _, _ := strings.Cut(strings.ToLower(body), "e")
		if strings.ContainsAny(mant, "123456789") {
			return 0, false
		}
	}
	return f, true
}
