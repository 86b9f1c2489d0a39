package resp

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// parseResult is what a connection made of a byte stream.
type parseResult struct {
	Cmds [][]string // non-empty commands, in order
	Err  string     // the protocol error that ended the stream, if any
	Rest int        // bytes left unconsumed (an incomplete command) when the stream ended
}

// parseAll feeds stream to Parse the way a server does when the bytes arrive in pieces cut at the
// (ascending) offsets cuts, and checks Parse's contract on every call: n within the buffer, need beyond
// it when incomplete, and need truthful (a shorter buffer for the same command is still incomplete).
func parseAll(t testing.TB, stream []byte, cuts []int, lim *Limits) parseResult {
	t.Helper()
	data := bytes.Clone(stream)
	var res parseResult
	var args [][]byte
	start, need := 0, 0 // need: what the last incomplete call at start asked for
	for _, end := range append(cuts, len(data)) {
		for start < end {
			buf := data[start:end]
			var n, nd int
			var err error
			args, n, nd, err = Parse(args[:0], buf, lim)
			switch {
			case n < 0 || n > len(buf):
				t.Fatalf("Parse consumed %d of %d bytes", n, len(buf))
			case err != nil:
				res.Err = err.(*ProtocolError).Msg
				return res
			case n == 0 && nd <= len(buf):
				t.Fatalf("incomplete with need %d <= len %d on %q", nd, len(buf), buf)
			case n == 0:
				need = nd
			case len(buf) < need:
				t.Fatalf("progress with %d bytes although an earlier call needed %d on %q", len(buf), need, buf)
			case nd != 0:
				t.Fatalf("complete command with need %d", nd)
			}
			if n == 0 {
				break
			}
			if len(args) > 0 {
				res.Cmds = append(res.Cmds, strs(args))
			}
			start, need = start+n, 0
		}
	}
	res.Rest = len(data) - start
	return res
}

func strs(args [][]byte) []string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = string(a)
	}
	return s
}

// pipelineStream mixes every kind of request a client sends, binary values and empty commands included.
const pipelineStream = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n" +
	"*0\r\n" +
	"GET key\r\n" +
	"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n" +
	"\r\n" +
	`SET "q\x41\"" 'it\'s'` + "\n" +
	"*-1\r\n" +
	"*1\r\n$4\r\nPING\r\n" +
	"   \t\r\n" +
	"*2\r\n$3\r\nGET\r\n$12\r\n\x00\x01\xff*1\r\n$1\r\nx\r\n" +
	"PING"

func TestFragmentEverySplit(t *testing.T) {
	lim := DefaultLimits()
	streams := []string{pipelineStream, pipelineStream + "\r\n*1\r\n$x\r\n", pipelineStream + " \"x\r\n"}
	for _, c := range append(multibulkCases, inlineCases...) {
		if len(c.in) < 1000 {
			streams = append(streams, c.in)
		}
	}
	for _, s := range streams {
		whole := parseAll(t, []byte(s), nil, &lim)
		for k := 0; k <= len(s); k++ {
			if got := parseAll(t, []byte(s), []int{k}, &lim); !reflect.DeepEqual(got, whole) {
				t.Fatalf("split at %d of %q:\n got %+v\nwant %+v", k, s, got, whole)
			}
		}
		bytewise := make([]int, len(s))
		for i := range bytewise {
			bytewise[i] = i
		}
		if got := parseAll(t, []byte(s), bytewise, &lim); !reflect.DeepEqual(got, whole) {
			t.Fatalf("byte by byte %q:\n got %+v\nwant %+v", s, got, whole)
		}
	}
	want := parseResult{Cmds: [][]string{
		{"SET", "key", "va\r\nl"}, {"GET", "key"}, {"ECHO", ""}, {"SET", `qA"`, "it's"}, {"PING"},
		{"GET", "\x00\x01\xff*1\r\n$1\r\nx"},
	}, Rest: 4}
	if got := parseAll(t, []byte(pipelineStream), nil, &lim); !reflect.DeepEqual(got, want) {
		t.Fatalf("pipeline:\n got %+v\nwant %+v", got, want)
	}
}

// TestFragmentLongLines splits the 64KB cases at random points: the "too big" decisions must not depend
// on how the bytes arrived.
func TestFragmentLongLines(t *testing.T) {
	lim := DefaultLimits()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range append(multibulkCases, inlineCases...) {
		if len(c.in) < 1000 {
			continue
		}
		whole := parseAll(t, []byte(c.in), nil, &lim)
		for range 20 {
			cuts := randomCuts(rng, len(c.in), 1+rng.IntN(8))
			if got := parseAll(t, []byte(c.in), cuts, &lim); !reflect.DeepEqual(got, whole) {
				t.Fatalf("%s split at %v: got %+v, want %+v", c.name, cuts, got, whole)
			}
		}
	}
	// A NUL never lets a long line through, whatever follows it.
	s := "*1\x00" + strings.Repeat("x", inlineMax) + "\r\n"
	if got := parseAll(t, []byte(s), []int{5, 100}, &lim); got.Err != msgTooBigMbulk {
		t.Fatalf("NUL-hidden count line: got %+v", got)
	}
}

// randomCuts returns k ascending offsets in [0, n].
func randomCuts(rng *rand.Rand, n, k int) []int {
	cuts := make([]int, k)
	for i := range cuts {
		cuts[i] = rng.IntN(n + 1)
	}
	slices.Sort(cuts)
	return cuts
}
