package embed

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// LexicalDefaultDim is the lexical embedder's dimension when the cache gives no DIM.
const LexicalDefaultDim = 256

// LexicalMaxDim bounds the lexical embedder's dimension (a vector is allocated per text).
const LexicalMaxDim = 32768

// Lexical is the built-in character n-gram hashing embedder. It is safe for concurrent use and
// holds no state besides its dimension.
type Lexical struct{ dim int }

// NewLexical returns a lexical embedder of dim dimensions.
func NewLexical(dim int) (*Lexical, error) {
	if dim < 2 || dim > LexicalMaxDim {
		return nil, fmt.Errorf("%w: lexical dimension must be between 2 and %d", ErrSpec, LexicalMaxDim)
	}
	return &Lexical{dim: dim}, nil
}

// Dim implements Embedder.
func (l *Lexical) Dim() int { return l.dim }

// Name implements Embedder.
func (l *Lexical) Name() string { return "lexical " + strconv.Itoa(l.dim) }

// Local implements Embedder: the lexical embedder does no I/O.
func (l *Lexical) Local() bool { return true }

// Embed implements Embedder; it never fails (ctx is not consulted: a text costs microseconds).
func (l *Lexical) Embed(_ context.Context, texts [][]byte) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = l.Vector(t, nil)
	}
	return out, nil
}

// Vector embeds one text into dst (grown to Dim) and returns it: the trigrams of the normalized
// text padded with a space each side, and each whole word weighted twice, hashed with a sign bit
// into the dimensions, then L2-normalized. An empty text gives the zero vector.
func (l *Lexical) Vector(text []byte, dst []float32) []float32 {
	dst = append(dst[:0], make([]float32, l.dim)...)
	norm := Normalize(text, nil)
	padded := make([]byte, 0, len(norm)+2)
	padded = append(append(append(padded, ' '), norm...), ' ')
	// Trigrams of runes, not bytes, so that a multi-byte letter is one symbol.
	var starts [4]int
	n := 0
	for i := 0; i < len(padded); {
		_, sz := utf8.DecodeRune(padded[i:])
		copy(starts[:], starts[1:])
		starts[3] = i
		n++
		i += sz
		if n >= 3 {
			l.add(dst, padded[starts[1]:i], 1)
		}
	}
	for _, w := range bytes.Fields(norm) {
		l.add(dst, w, 2)
	}
	var sum float64
	for _, x := range dst {
		sum += float64(x) * float64(x)
	}
	if sum > 0 {
		inv := float32(1 / math.Sqrt(sum))
		for i := range dst {
			dst[i] *= inv
		}
	}
	return dst
}

// add adds weight w for feature f: FNV-1a 64 picks the dimension, its top bit the sign.
func (l *Lexical) add(v []float32, f []byte, w float32) {
	h := uint64(14695981039346656037)
	for _, b := range f {
		h ^= uint64(b)
		h *= 1099511628211
	}
	if h>>63 != 0 {
		w = -w
	}
	v[(h&(1<<63-1))%uint64(len(v))] += w
}

// Normalize appends to dst the text lower-cased (Unicode simple folding to lower case) with
// every run of white space made one space and the ends trimmed: the form the exact lookup of
// LLMCACHE compares ("What  is 2+2? " and "what is 2+2?" are the same prompt).
func Normalize(text []byte, dst []byte) []byte {
	start, space := len(dst), false
	for i := 0; i < len(text); {
		r, sz := utf8.DecodeRune(text[i:])
		i += sz
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && len(dst) > start {
			dst = append(dst, ' ')
		}
		space = false
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			dst = append(dst, byte(r))
			continue
		}
		if r == utf8.RuneError && sz == 1 {
			dst = append(dst, text[i-1]) // invalid UTF-8 is kept byte for byte
			continue
		}
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}
