package script

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// evalChunk is the chunk name Redis 7.0 gives EVAL bodies: errors read "user_script:N: ..." and
// the reply's suffix "on @user_script:N.".
const evalChunk = "user_script"

// compileScript parses an EVAL body (shebang included) into a Script.
func compileScript(body []byte, sum [20]byte) (*Script, string) {
	flags, src, errReply := parseShebang(body)
	if errReply != "" {
		return nil, errReply
	}
	proto, errReply := compileLua(src, evalChunk)
	if errReply != "" {
		return nil, errReply
	}
	s := &Script{SHA: hexSum(sum), Flags: flags, proto: proto, name: evalChunk}
	return s, ""
}

func hexSum(sum [20]byte) string {
	const digits = "0123456789abcdef"
	var b [40]byte
	for i, c := range sum {
		b[2*i], b[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(b[:])
}

// compileLua compiles src under chunk name; a syntax error becomes Redis's "Error compiling
// script" reply. The proto is the concat wrapper (concat.go): state.instantiate turns it into
// the script's function.
func compileLua(src []byte, chunk string) (*lua.FunctionProto, string) {
	tree, err := parse.Parse(bytes.NewReader(src), chunk)
	if err != nil {
		return nil, errCompilePrefix + syntaxMessage(err, src, chunk)
	}
	proto, err := lua.Compile(wrapChunk(tree), chunk)
	if err != nil {
		return nil, errCompilePrefix + chunk + ": " + oneLine(err.Error())
	}
	// Lua 5.1 gives a main chunk no "arg" table; gopher-lua builds one on every call (a table
	// and a map: most of a small script's allocations). The script is the wrapper's one
	// nested function (concat.go).
	proto.IsVarArg &^= lua.VarArgNeedsArg
	proto.FunctionPrototypes[0].IsVarArg &^= lua.VarArgNeedsArg
	return proto, ""
}

// syntaxMessage rewrites gopher-lua's parse error in Lua 5.1's shape, "chunk:LINE: MSG near
// 'TOKEN'". Line and token are exact; Lua's message varies with what it expected ("'end'
// expected", "'=' expected"), where gopher-lua's grammar only says "syntax error": that becomes
// Lua's most common "unexpected symbol".
func syntaxMessage(err error, src []byte, chunk string) string {
	var pe *parse.Error
	if !errors.As(err, &pe) {
		return chunk + ": " + oneLine(err.Error())
	}
	line, tok := pe.Pos.Line, "'"+pe.Token+"'"
	if line == parse.EOF {
		line, tok = bytes.Count(src, []byte{'\n'})+1, "'<eof>'"
	}
	msg := pe.Message
	if msg == "syntax error" {
		msg = "unexpected symbol"
	}
	return chunk + ":" + strconv.Itoa(line) + ": " + msg + " near " + tok
}

func oneLine(s string) string { return strings.TrimRight(s, "\n") }

// parseShebang reads an optional "#!lua [flags=a,b]" first line. It returns the flags and the
// source to compile: the shebang line turned into a Lua comment, so line numbers stay.
func parseShebang(body []byte) (Flags, []byte, string) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return 0, body, ""
	}
	nl := bytes.IndexByte(body, '\n')
	if nl < 0 {
		return 0, nil, errShebangInvalid
	}
	parts := strings.Fields(string(body[:nl]))
	if parts[0] != "#!lua" {
		return 0, nil, errShebangEngine + parts[0]
	}
	flags := FlagShebang
	for _, opt := range parts[1:] {
		list, ok := strings.CutPrefix(opt, "flags=")
		if !ok {
			return 0, nil, errShebangOption + opt
		}
		f, bad, ok := parseFlagList(list)
		if !ok {
			return 0, nil, errShebangFlag + bad
		}
		flags |= f
	}
	src := append([]byte("--"), body[2:]...)
	return flags, src, ""
}

// ShebangFlags returns the flags an EVAL body declares in its "#!lua" line, with FlagShebang
// set; ok is false when it has no shebang or an invalid one (Redis then goes by the command's
// own flags). It compiles nothing: the command layer asks before a script runs (CLIENT PAUSE
// WRITE, the OOM check).
func ShebangFlags(body []byte) (f Flags, ok bool) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return 0, false
	}
	f, _, msg := parseShebang(body)
	return f, msg == ""
}

// flagNames are the flag words of shebangs and of register_function, in Redis's order.
var flagNames = []struct {
	name string
	flag Flags
}{
	{"no-writes", FlagNoWrites},
	{"allow-oom", FlagAllowOOM},
	{"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster},
	{"allow-cross-slot-keys", FlagAllowCrossSlot},
}

// parseFlagList parses "a,b,c"; when ok is false, bad is the first unknown word.
func parseFlagList(list string) (f Flags, bad string, ok bool) {
	if list == "" {
		return 0, "", true
	}
	for _, w := range strings.Split(list, ",") {
		g, known := flagByName(w)
		if !known {
			return 0, w, false
		}
		f |= g
	}
	return f, "", true
}

func flagByName(w string) (Flags, bool) {
	for _, n := range flagNames {
		if n.name == w {
			return n.flag, true
		}
	}
	return 0, false
}

// Names lists the flags' words, as FUNCTION LIST shows them.
func (f Flags) Names() []string {
	var out []string
	for _, n := range flagNames {
		if f&n.flag != 0 {
			out = append(out, n.name)
		}
	}
	return out
}
