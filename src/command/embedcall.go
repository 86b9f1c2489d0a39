package command

import (
	"context"
	"errors"
	"strings"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/src/ai/embed"
)

// Embedding off the shard (docs/decisions.md, "Embedding off the shard"): a command that may call
// a remote embedder (LLMCACHE.GET/SET, MEM.ADD/SEARCH without VECTOR) is a ScopeSelf barrier, as
// MIGRATE is. It runs on its connection's goroutine holding no token, after the earlier commands
// of its batch and before the later ones, so replies keep their order and only that connection
// waits: it reads what it needs under the key's shard (runInShard), embeds holding nothing
// (embedOffShard), then takes the shard again to do its work with the vector.

// offShardCommands are the commands that may embed off the shard, with a test of their
// arguments (true: this call may do I/O). mayBlock (route.go) sends their batches off the netpoll
// poller, where waiting for an endpoint would stall every connection of the poller.
var offShardCommands = map[string]func(args [][]byte) bool{}

// offShard reports whether a call of spec with args may wait for an embedder.
func offShard(spec *Spec, args [][]byte) bool {
	f := offShardCommands[spec.Name]
	return f != nil && f(args)
}

// hasWord reports whether any argument after the key (args[2:]) is word, case-insensitively. It
// may answer true for an argument that is a value (a prompt "VECTOR"), never false wrongly.
func hasWord(args [][]byte, word string) bool {
	for _, a := range args[min(2, len(args)):] {
		if strs.EqualFold(a, word) {
			return true
		}
	}
	return false
}

// errNeedsIO is the reply where a remote embedder would be needed while tokens are held.
const errNeedsIO = "ERR this embedder calls a remote endpoint, which MULTI/EXEC and scripts cannot wait for: send VECTOR"

// embedOffShard embeds texts with emb. A local embedder (lexical) runs at once. A remote one is
// called only while the call holds no token: inside MULTI/EXEC or a script (c.tx set) it answers
// from the embedder's recent-texts cache or fails with errNeedsIO. The error's text is a
// one-line reply without the leading '-'.
func embedOffShard(c *Ctx, emb embed.Embedder, texts [][]byte) ([][]float32, error) {
	if emb.Local() {
		return emb.Embed(context.Background(), texts)
	}
	if c.tx != nil {
		o, ok := emb.(*embed.OpenAI)
		if !ok {
			return nil, errors.New(errNeedsIO)
		}
		out := make([][]float32, len(texts))
		for i, t := range texts {
			if out[i], ok = o.Cached(t); !ok {
				return nil, errors.New(errNeedsIO)
			}
		}
		return out, nil
	}
	vs, err := emb.Embed(context.Background(), texts) // the embedder's own timeout bounds it
	if err != nil {
		return nil, errors.New("ERR " + strings.ReplaceAll(err.Error(), "\r\n", " "))
	}
	return vs, nil
}
