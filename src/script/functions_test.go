package script

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp"
)

// fnCase is one case of testdata/functions.txt: steps run on the reference server and in the
// Engine, whose replies must be equal byte for byte, for a RESP2 and a RESP3 caller.
type fnCase struct {
	name  string
	steps []fnStep
}

type fnStep struct {
	op   string   // load, load-replace, fcall, fcall_ro, delete, list, list-withcode, list-pattern, flush, eval_ro
	args []string // fcall: name numkeys keys... args...; delete/list-pattern: the name/pattern
	code string   // load: the library code
}

func parseFnCases(t *testing.T, path string) []fnCase {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []fnCase
	var cur *fnCase
	var step *fnStep
	var code []string
	endStep := func() {
		if step != nil {
			step.code = strings.TrimRight(strings.Join(code, "\n"), "\n")
			cur.steps = append(cur.steps, *step)
			step, code = nil, nil
		}
	}
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "=== "):
			if cur != nil {
				endStep()
				out = append(out, *cur)
			}
			cur = &fnCase{name: line[4:]}
		case strings.HasPrefix(line, "+++ "):
			endStep()
			f := strings.Fields(line[4:])
			step = &fnStep{op: f[0], args: f[1:]}
		case step != nil:
			code = append(code, line)
		}
	}
	if cur != nil {
		endStep()
		out = append(out, *cur)
	}
	return out
}

func TestDifferentialFunctions(t *testing.T) {
	cases := parseFnCases(t, "testdata/functions.txt")
	redisAddr(t)
	for _, c := range cases {
		for _, proto := range []int{2, 3} {
			t.Run(c.name+"/resp"+strconv.Itoa(proto), func(t *testing.T) {
				cn := dial(t, proto)
				cn.do(t, "FUNCTION", "FLUSH")
				cn.do(t, "FLUSHALL")
				e := New(Config{})
				defer e.Close()
				h := newRedisHost(t)
				for i, s := range c.steps {
					want := redisStep(t, cn, s)
					got := engineStep(e, h, s, proto)
					if !bytes.Equal(want, got) {
						t.Errorf("step %d %s %v:\n%s\nredis:  %q\nengine: %q", i, s.op, s.args, s.code, want, got)
					}
				}
			})
		}
	}
}

func redisStep(t *testing.T, cn *conn, s fnStep) []byte {
	switch s.op {
	case "load":
		return cn.do(t, "FUNCTION", "LOAD", s.code)
	case "load-replace":
		return cn.do(t, "FUNCTION", "LOAD", "REPLACE", s.code)
	case "fcall", "fcall_ro":
		return cn.do(t, append([]string{strings.ToUpper(s.op)}, s.args...)...)
	case "eval_ro":
		return cn.do(t, "EVAL_RO", s.code, "0")
	case "delete":
		return cn.do(t, "FUNCTION", "DELETE", s.args[0])
	case "flush":
		return cn.do(t, "FUNCTION", "FLUSH")
	case "list":
		return cn.do(t, "FUNCTION", "LIST")
	case "list-withcode":
		return cn.do(t, "FUNCTION", "LIST", "WITHCODE")
	case "list-pattern":
		return cn.do(t, "FUNCTION", "LIST", "LIBRARYNAME", s.args[0])
	}
	t.Fatalf("unknown step %q", s.op)
	return nil
}

func engineStep(e *Engine, h *redisHost, s fnStep, proto int) []byte {
	switch s.op {
	case "load", "load-replace":
		name, errReply := e.FunctionLoad(h, []byte(s.code), s.op == "load-replace")
		if errReply != "" {
			return appendErrorLine(nil, errReply)
		}
		return resp.AppendBulkString(nil, name)
	case "fcall", "fcall_ro":
		n, _ := strconv.Atoi(s.args[1])
		rest := byteSlices(s.args[2:])
		return e.FCall(nil, h, []byte(s.args[0]), rest[:n], rest[n:], RunOptions{Proto: proto, ReadOnly: s.op == "fcall_ro"})
	case "eval_ro":
		sc, errReply := e.Compile([]byte(s.code))
		if errReply != "" {
			return appendErrorLine(nil, errReply)
		}
		return e.Run(nil, h, sc, nil, nil, RunOptions{Proto: proto, ReadOnly: true})
	case "delete":
		if errReply := e.FunctionDelete([]byte(s.args[0])); errReply != "" {
			return appendErrorLine(nil, errReply)
		}
		return resp.AppendSimple(nil, "OK")
	case "flush":
		e.FunctionFlush()
		return resp.AppendSimple(nil, "OK")
	case "list":
		return renderList(e.FunctionList(nil), false, proto)
	case "list-withcode":
		return renderList(e.FunctionList(nil), true, proto)
	case "list-pattern":
		return renderList(e.FunctionList([]byte(s.args[0])), false, proto)
	}
	return nil
}

// renderList is FUNCTION LIST's reply as Redis 7.0.15 writes it (the command layer's job; here
// so that the data FunctionList gives is checked against the real reply).
func renderList(libs []*Library, withCode bool, proto int) []byte {
	mapHeader := func(dst []byte, n int) []byte {
		if proto >= 3 {
			return appendHeader(dst, '%', n)
		}
		return appendHeader(dst, '*', 2*n)
	}
	dst := appendHeader(nil, '*', len(libs))
	for _, lib := range libs {
		n := 3
		if withCode {
			n = 4
		}
		dst = mapHeader(dst, n)
		dst = resp.AppendBulkString(dst, "library_name")
		dst = resp.AppendBulkString(dst, lib.Name)
		dst = resp.AppendBulkString(dst, "engine")
		dst = resp.AppendBulkString(dst, "LUA")
		dst = resp.AppendBulkString(dst, "functions")
		dst = appendHeader(dst, '*', len(lib.Functions))
		for _, f := range lib.Functions {
			dst = mapHeader(dst, 3)
			dst = resp.AppendBulkString(dst, "name")
			dst = resp.AppendBulkString(dst, f.Name)
			dst = resp.AppendBulkString(dst, "description")
			if f.HasDescription {
				dst = resp.AppendBulkString(dst, f.Description)
			} else {
				dst = resp.AppendNull(dst, proto)
			}
			dst = resp.AppendBulkString(dst, "flags")
			names := f.Flags.Names()
			kind := byte('*')
			if proto >= 3 {
				kind = '~'
			}
			dst = appendHeader(dst, kind, len(names))
			for _, n := range names {
				dst = resp.AppendSimple(dst, n) // Redis writes flags as status replies
			}
		}
		if withCode {
			dst = resp.AppendBulkString(dst, "library_code")
			dst = resp.AppendBulk(dst, lib.Code)
		}
	}
	return dst
}
