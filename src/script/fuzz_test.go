package script

import (
	"bytes"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// FuzzPushReply feeds arbitrary bytes to the RESP-to-Lua converter: it never panics, consumes
// only bytes it was given, and a reply it accepts, converted back for a RESP3 caller, converts
// again to the same bytes (the Lua forms are a fixed point).
func FuzzPushReply(f *testing.F) {
	for _, seed := range []string{
		"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*-1\r\n", "*2\r\n:1\r\n$1\r\na\r\n",
		"%1\r\n$1\r\nk\r\n$1\r\nv\r\n", "~1\r\n$1\r\nm\r\n", "_\r\n", "#t\r\n", ",1.5\r\n", ",inf\r\n",
		"(123\r\n", "=7\r\ntxt:abc\r\n", "|1\r\n+a\r\n+b\r\n:1\r\n", "*3\r\n*1\r\n*1\r\n:1\r\n:2\r\n:3\r\n",
		"*99999999999\r\n", "$99999999\r\nab\r\n",
	} {
		f.Add([]byte(seed))
	}
	e := New(Config{})
	defer e.Close()
	sl := e.pool.acquire()
	defer e.pool.release(sl)
	st := sl.st
	f.Fuzz(func(t *testing.T, b []byte) {
		L := st.L
		L.SetTop(0)
		rest, ok := st.pushReply(L, b, 0)
		if !ok {
			return
		}
		if len(rest) > len(b) || !bytes.HasSuffix(b, rest) {
			t.Fatalf("rest %q is not a suffix of %q", rest, b)
		}
		v := L.Get(-1)
		once := st.appendReply(nil, v, 3, 3, 0)
		L.SetTop(0)
		if _, ok := st.pushReply(L, once, 0); !ok {
			t.Fatalf("%q -> %q does not parse back", b, once)
		}
		twice := st.appendReply(nil, L.Get(-1), 3, 3, 0)
		L.SetTop(0)
		if !isAggregateOfMaps(v) && !bytes.Equal(once, twice) {
			t.Fatalf("%q: %q then %q", b, once, twice)
		}
	})
}

// isAggregateOfMaps: map and set element order is the table's, which may change on rebuild.
func isAggregateOfMaps(v lua.LValue) bool {
	t, ok := v.(*lua.LTable)
	if !ok {
		return false
	}
	found := false
	t.ForEach(func(k, v lua.LValue) {
		if k.String() == "map" || k.String() == "set" || isAggregateOfMaps(v) {
			found = true
		}
	})
	return found
}

// FuzzShebang: the EVAL shebang parser and the library header parser accept or refuse any
// first line without panicking; an accepted script keeps its line count.
func FuzzShebang(f *testing.F) {
	for _, seed := range []string{
		"#!lua\nreturn 1", "#!lua flags=no-writes,allow-oom\nreturn 1", "#!lua flags=\nx", "#!js\n", "#!lua",
		"#!lua name=lib\nredis.register_function('f', function() end)", "#!lua name=a name=b\n", "return 1", "#!\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, src, errReply := parseShebang(body); errReply == "" && bytes.Count(src, []byte{'\n'}) != bytes.Count(body, []byte{'\n'}) {
			t.Fatalf("%q: source %q changed the line count", body, src)
		}
		if name, errReply := parseLibraryHeader(body); errReply == "" && !validName(name) {
			t.Fatalf("%q: accepted the name %q", body, name)
		}
	})
}
