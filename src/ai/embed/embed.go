// Package embed turns texts into vectors for the AI caching commands (LLMCACHE.*, MEM.*).
//
// Two embedders are built in:
//
//   - Lexical: character n-gram hashing (n = 3 over the normalized text, padded with spaces,
//     plus whole words) into a fixed number of dimensions, L2-normalized. Deterministic, no I/O,
//     a few microseconds per short prompt: for tests and for exact-ish matching. Its similarity is
//     about shared spelling, not meaning, and it says so in its Name ("lexical").
//   - OpenAI: POST {"model": m, "input": [...]} to an OpenAI-compatible /v1/embeddings endpoint,
//     with a timeout per request, batching of concurrent calls into one request, and a small cache
//     of recent texts' vectors. It does network I/O, so a caller holding a shard token must never
//     call Embed (DESIGN invariant 6): the command layer calls it from the connection's goroutine
//     before it takes the shard (docs/decisions.md, "Embedding off the shard").
//
// The package imports nothing from the project and knows nothing of RESP: errors are plain Go
// errors whose text the command layer puts into its error reply.
package embed

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Embedder maps texts to vectors of Dim() float32s each, in the order of texts.
type Embedder interface {
	// Embed returns one vector per text. The texts' bytes are only read during the call.
	Embed(ctx context.Context, texts [][]byte) ([][]float32, error)
	// Dim is the length of every vector Embed returns (0 while unknown: an OpenAI embedder
	// created without a DIM learns it from its first reply).
	Dim() int
	// Name describes the embedder as CONFIG-like text: "lexical 256" or "openai URL model".
	Name() string
	// Local reports whether Embed does no I/O and finishes in microseconds, so that it may run
	// while a shard token is held (the lexical embedder).
	Local() bool
}

// ErrSpec is wrapped by the errors of Parse.
var ErrSpec = errors.New("invalid embedder")

// Parse builds an embedder from the words of an EMBEDDER option: "lexical" or
// "openai URL model". dim is the cache's DIM (0: unset; the lexical embedder then uses
// LexicalDefaultDim, an OpenAI embedder learns it from the endpoint).
func Parse(words []string, dim int, opts Options) (Embedder, error) {
	if len(words) == 0 {
		return nil, fmt.Errorf("%w: missing kind", ErrSpec)
	}
	switch strings.ToLower(words[0]) {
	case "lexical":
		if len(words) != 1 {
			return nil, fmt.Errorf("%w: lexical takes no arguments", ErrSpec)
		}
		if dim == 0 {
			dim = LexicalDefaultDim
		}
		return NewLexical(dim)
	case "openai":
		if len(words) != 3 {
			return nil, fmt.Errorf("%w: openai takes URL and model", ErrSpec)
		}
		return NewOpenAI(words[1], words[2], dim, opts)
	}
	return nil, fmt.Errorf("%w: unknown kind '%s' (lexical or openai)", ErrSpec, words[0])
}
