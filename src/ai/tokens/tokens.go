// Package tokens counts the tokens a text costs under OpenAI's byte-pair
// encodings cl100k_base (GPT-3.5/GPT-4) and o200k_base (GPT-4o and later),
// for the commands that take text and charge it against a budget
// (BUDGET.TAKE … TEXT, MEM.WINDOW's token budget).
//
// It is the only package that imports github.com/tiktoken-go/tokenizer, whose
// BPE tables are compiled into the binary (it works offline). A table is built
// the first time its encoding is used (Load builds it ahead), and is read-only
// afterwards: Count is safe for concurrent use.
//
// Counting is ordinary-text counting, as tiktoken's encode_ordinary: special
// tokens such as "<|endoftext|>" are counted as the text they spell. Invalid
// UTF-8 is counted as if each maximal invalid subsequence were U+FFFD (what
// Python's bytes.decode(errors="replace") gives tiktoken).
package tokens

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Encoding names one BPE table. The zero value is no encoding.
type Encoding uint8

const (
	// Cl100k is cl100k_base (gpt-3.5-turbo, gpt-4, text-embedding-3-*).
	Cl100k Encoding = iota + 1
	// O200k is o200k_base (gpt-4o, gpt-4.1, o1, o3, gpt-5).
	O200k
)

// Default is the encoding used where a command names none.
const Default = Cl100k

// String returns the encoding's tiktoken name.
func (e Encoding) String() string {
	switch e {
	case Cl100k:
		return "cl100k_base"
	case O200k:
		return "o200k_base"
	}
	return "unknown"
}

// Parse maps a name to an Encoding, case-insensitively: "cl100k" or
// "cl100k_base", "o200k" or "o200k_base". It does not allocate.
func Parse(name []byte) (Encoding, bool) {
	s := unsafe.String(unsafe.SliceData(name), len(name))
	switch {
	case strings.EqualFold(s, "cl100k"), strings.EqualFold(s, "cl100k_base"):
		return Cl100k, true
	case strings.EqualFold(s, "o200k"), strings.EqualFold(s, "o200k_base"):
		return O200k, true
	}
	return 0, false
}

type table struct {
	once sync.Once
	c    *codec.Codec
	mk   func() *codec.Codec
}

var tables = [...]table{
	Cl100k: {mk: codec.NewCl100kBase},
	O200k:  {mk: codec.NewO200kBase},
}

func (e Encoding) codec() *codec.Codec {
	if e == 0 || int(e) >= len(tables) {
		return nil
	}
	t := &tables[e]
	t.once.Do(func() {
		c := t.mk()
		c.SetErrorMode(codec.ErrorModeReplace)
		t.c = c
	})
	return t.c
}

// Load builds enc's table now (tens of milliseconds and some megabytes the
// first time), so that the first Count does not pay for it. It reports false
// for an unknown encoding.
func Load(enc Encoding) bool { return enc.codec() != nil }

// Count returns the number of tokens text encodes to under enc, or -1 for an
// unknown encoding. text is only read during the call. Its cost is linear in
// the text for ordinary prose (a regular-expression split, then BPE merges of
// each piece); the splitter allocates per call (see the package benchmark).
func Count(enc Encoding, text []byte) int {
	c := enc.codec()
	if c == nil {
		return -1
	}
	if len(text) == 0 {
		return 0
	}
	n, err := c.Count(unsafe.String(unsafe.SliceData(text), len(text)))
	if err != nil {
		// The splitter reports errors only for a match timeout, which is
		// not set; count what cannot be split as one token per byte rather
		// than undercharge.
		return len(text)
	}
	return n
}
