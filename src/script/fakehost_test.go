package script

import (
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/net/resp"
)

// memHost is an in-memory Host for unit tests and benchmarks: GET, SET, INCR and DEL over a map
// (the dumb reference), nothing else. It allocates nothing per call once a key exists.
type memHost struct {
	data     map[string][]byte
	counters map[string]*int64
	calls    int
	logs     []string
}

func newMemHost() *memHost { return &memHost{data: map[string][]byte{}, counters: map[string]*int64{}} }

var memArity = map[string]int{"get": 2, "set": 3, "incr": 2, "del": -2, "ping": -1}

func (h *memHost) Command(args [][]byte) Command {
	name, ar := "", 0
	for n, a := range memArity {
		if strings.EqualFold(n, string(args[0])) {
			name, ar = n, a
		}
	}
	if name == "" {
		return 0
	}
	c := CommandKnown
	if (ar > 0 && len(args) == ar) || (ar < 0 && len(args) >= -ar) {
		c |= CommandArityOK
	}
	if name == "set" || name == "incr" || name == "del" {
		c |= CommandWrite
	}
	return c
}

func (h *memHost) Call(args [][]byte, proto int, _ Repl, dst []byte) []byte {
	h.calls++
	switch {
	case len(args[0]) == 4 && strings.EqualFold(string(args[0]), "incr"):
		c, ok := h.counters[string(args[1])]
		if !ok {
			c = new(int64)
			if v, isStr := h.data[string(args[1])]; isStr {
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil {
					return resp.AppendError(dst, "ERR value is not an integer or out of range")
				}
				*c = n
				delete(h.data, string(args[1]))
			}
			h.counters[string(args[1])] = c
		}
		*c++ // counters live apart from data so that an INCR of an existing key allocates nothing
		return resp.AppendInt(dst, *c)
	case strings.EqualFold(string(args[0]), "get"):
		if c, ok := h.counters[string(args[1])]; ok {
			return resp.AppendBulkInt(dst, *c)
		}
		v, ok := h.data[string(args[1])]
		if !ok {
			return resp.AppendNull(dst, proto)
		}
		return resp.AppendBulk(dst, v)
	case strings.EqualFold(string(args[0]), "set"):
		delete(h.counters, string(args[1]))
		h.data[string(args[1])] = append([]byte(nil), args[2]...)
		return resp.AppendSimple(dst, "OK")
	case strings.EqualFold(string(args[0]), "del"):
		n := 0
		for _, k := range args[1:] {
			_, isStr := h.data[string(k)]
			_, isCounter := h.counters[string(k)]
			if isStr || isCounter {
				delete(h.data, string(k))
				delete(h.counters, string(k))
				n++
			}
		}
		return resp.AppendInt(dst, int64(n))
	}
	return resp.AppendSimple(dst, "PONG")
}

func (h *memHost) Allowed([][]byte) bool { return true }

func (h *memHost) Log(level int, msg string) {
	h.logs = append(h.logs, strconv.Itoa(level)+" "+msg)
}
