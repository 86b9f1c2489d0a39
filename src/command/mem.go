package command

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/ds/agentmem"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/vector"
	"github.com/hotkv/hotkv/src/ai/embed"
	"github.com/hotkv/hotkv/src/ai/tokens"
)

// Agent memory, HotKV's MEM.* over the key type "agentmem" (ds/agentmem): records of text with
// an embedding and metadata, searched under exact pre-filters by similarity, recency and
// importance; versions (SUPERSEDE); per-session working-memory windows with a token budget
// (mem_window.go). A key is made by MEM.CREATE, never implicitly, so its dimension and its
// REQUIREUSER rule are chosen once and a typo in a key name is an error, not a new memory.
//
// Times are unix ms. Every write runs at the command's time (Ctx.Now) and is replicated in an
// absolute, deterministic form: MEM.ADD with the id it generated, its AT (creation) time, PXAT
// for a TTL; FORGET as MEM.DEL of the ids it removed; records found expired as MEM.DEL before
// the command. Expired records are hidden from every read at once and removed by the next write
// to the key (there is no active cycle for them: a key nobody writes keeps their memory until
// then, which MEMORY USAGE shows).
//
// Concurrency: writes hold the shard's token; SEARCH, GET, INFO and WINDOW.GET are shared reads
// (shared.go) and change nothing.
var memCommands = []*Spec{
	{Name: "mem.create", Arity: -4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: memCreate},
	{Name: "mem.add", Arity: -4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: memAdd},
	{Name: "mem.update", Arity: -4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: memUpdate},
	{Name: "mem.get", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: memGet, shared: true},
	{Name: "mem.del", Arity: -3, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: memDel},
	{Name: "mem.supersede", Arity: -4, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: memSupersede},
	{Name: "mem.search", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: memSearch, shared: true},
	{Name: "mem.forget", Arity: -3, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: memForget},
	{Name: "mem.info", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: memInfo, shared: true},
	{Name: "mem.window.append", Arity: -5, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: memWindowAppend},
	{Name: "mem.window.get", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: memWindowGet, shared: true},
	{Name: "mem.window.clear", Arity: 3, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: memWindowClear},
}

// memValue is an agent memory key's value: the store, and its embedder when MEM.CREATE named
// one (only the lexical embedder, which does no I/O and so runs holding the shard's token).
type memValue struct {
	s            *agentmem.Store
	emb          *embed.Lexical
	queuedExpiry // where the store sits in its shard's expiry queue (mem_expire.go)
}

// newMemValue wraps s, rebuilding the embedder its configuration names.
func newMemValue(s *agentmem.Store) (*memValue, error) {
	v := &memValue{s: s}
	if s.Config().Embedder == "lexical" {
		l, err := embed.NewLexical(s.Config().Dim)
		if err != nil {
			return nil, err
		}
		v.emb = l
	} else if s.Config().Embedder != "" {
		return nil, errors.New("unknown agent memory embedder " + s.Config().Embedder)
	}
	return v, nil
}

// Encoding is OBJECT ENCODING's answer: a module value's, "raw".
func (v *memValue) Encoding() string { return "raw" }

// Clone is COPY's.
func (v *memValue) Clone() any { return &memValue{s: v.s.Clone(), emb: v.emb} }

// embedText returns the vector for text from v's embedder; ok is false when it replied (no
// embedder, or an empty text's zero vector).
func (v *memValue) embedText(c *Ctx, text []byte) ([]float32, bool) {
	if v.emb == nil {
		c.Err(ErrMemNeedVector)
		return nil, false
	}
	return v.emb.Vector(text, make([]float32, v.emb.Dim())), true
}

// Len is the number of records (lazyfree's effort).
func (v *memValue) Len() int { return v.s.Len() }

// memDefaultWindow is a window's token budget when MEM.CREATE gives no WINDOW.
const memDefaultWindow = 4096

// MEM.CREATE key DIM n [REQUIREUSER] [QUANT NOQUANT|Q8|BIN] [WINDOW tokens]
// [ENCODING cl100k_base|o200k_base] [EMBEDDER lexical] [EF build-ef]: +OK. EF is the HNSW
// index's build EF (default 200): lower loads faster, at some recall of large-filter searches. With EMBEDDER lexical, DIM defaults to
// 256 and ADD/UPDATE embed TEXT, SEARCH QUERY text, when no VECTOR is given.
func memCreate(c *Ctx) {
	key := c.Args[1]
	cfg := agentmem.Config{Quant: vector.Q8, Window: memDefaultWindow, Encoding: uint8(tokens.Default)}
	args := c.Args[2:]
	for j := 0; j < len(args); j++ {
		a := args[j]
		if eqFold(a, "requireuser") {
			cfg.RequireUser = true
			continue
		}
		if j+1 >= len(args) {
			c.Err(ErrSyntax)
			return
		}
		val := args[j+1]
		j++
		n, isInt := ParseInt(val)
		switch {
		case eqFold(a, "dim"):
			if !isInt || n < 1 || n > vector.MaxDim {
				c.Err(ErrVsimDim)
				return
			}
			cfg.Dim = int(n)
		case eqFold(a, "quant"):
			switch {
			case eqFold(val, "noquant"):
				cfg.Quant = vector.NoQuant
			case eqFold(val, "q8"):
				cfg.Quant = vector.Q8
			case eqFold(val, "bin"):
				cfg.Quant = vector.Bin
			default:
				c.Err(ErrVsimQuant)
				return
			}
		case eqFold(a, "window"):
			if !isInt || n < 1 || n > math.MaxInt32 {
				c.Err(ErrMemWindow)
				return
			}
			cfg.Window = int(n)
		case eqFold(a, "ef"):
			if !isInt || n <= 0 || n > 1000000 {
				c.Err(ErrVsetEF)
				return
			}
			cfg.EF = int(n)
		case eqFold(a, "embedder"):
			if !eqFold(val, "lexical") {
				c.Err(ErrMemEmbedder)
				return
			}
			cfg.Embedder = "lexical"
		case eqFold(a, "encoding"):
			enc, ok := tokens.Parse(val)
			if !ok {
				c.Err(ErrMemEncoding)
				return
			}
			cfg.Encoding = uint8(enc)
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if cfg.Dim == 0 && cfg.Embedder != "" {
		cfg.Dim = embed.LexicalDefaultDim
	}
	if cfg.Dim == 0 || cfg.Embedder != "" && cfg.Dim > embed.LexicalMaxDim {
		c.Err(ErrVsimDim)
		return
	}
	if e := c.Find(key); e != nil {
		if e.Kind != keyspace.KindAgentMem {
			c.WrongType()
		} else {
			c.Err(ErrMemExists)
		}
		return
	}
	s, err := agentmem.New(cfg)
	if err != nil {
		c.Err("ERR " + err.Error())
		return
	}
	v, err := newMemValue(s)
	if err != nil {
		c.Err("ERR " + err.Error())
		return
	}
	e := c.KS(key).Add(key)
	keyspace.SetObj(e, keyspace.KindAgentMem, v)
	e.Access = uint32(c.Now / int64(time.Second))
	c.Changed(NotifyModule, "mem.create", key)
	c.Dirty(1)
	c.OK()
}

// readAgentMem looks key up for a read; ok is false when it replied (WRONGTYPE, or the missing key's
// error).
func readAgentMem(c *Ctx, key []byte) (v *memValue, ok bool) {
	e := lookupForRead(c, key)
	if e == nil {
		c.Err(ErrMemNoKey)
		return nil, false
	}
	if e.Kind != keyspace.KindAgentMem {
		c.WrongType()
		return nil, false
	}
	return keyspace.Obj[memValue](e), true
}

// writeAgentMem is readAgentMem for a write, under the shard's token. Writes whose outcome
// depends on expiry (ADD, UPDATE, SUPERSEDE, FORGET) then call sweepAgentMem at their time; DEL
// and the window commands do not, so that a replica replaying the primary's stream later than it
// ran reaches the same state: it removes expired records only when the stream says so, as the
// MEM.DELs propagated before those commands, or at the AT time the command carries.
func writeAgentMem(c *Ctx, key []byte) (v *memValue, ok bool) {
	e := c.Find(key)
	if e == nil {
		c.Err(ErrMemNoKey)
		return nil, false
	}
	if e.Kind != keyspace.KindAgentMem {
		c.WrongType()
		return nil, false
	}
	return keyspace.Obj[memValue](e), true
}

// sweepAgentMem removes v's records expired at ms, replicated as one MEM.DEL before the command
// and raising "mem.expired". From then on the command propagates only what it gives Propagate,
// so that one failing after the sweep is not replicated as itself.
func sweepAgentMem(c *Ctx, key []byte, v *memValue, ms int64) {
	dead := v.s.Expired(ms, 0)
	if len(dead) == 0 {
		return
	}
	propagateMemDel(c, c.DB, key, dead)
	c.Changed(NotifyModule, "mem.expired", key)
	c.Dirty(len(dead))
	c.PropagateNothing()
}

var memDelArg = []byte("MEM.DEL")

// memNow is the command's time in unix ms.
func memNow(c *Ctx) int64 { return c.Now / 1e6 }

// memErr replies for an error of ds/agentmem's.
func memErr(c *Ctx, err error) {
	switch {
	case errors.Is(err, agentmem.ErrNotFound):
		c.Err(ErrMemNotFound)
	case errors.Is(err, agentmem.ErrSuperseded):
		c.Err(ErrMemSuperseded)
	case errors.Is(err, agentmem.ErrSameMemory):
		c.Err(ErrMemSelf)
	case errors.Is(err, agentmem.ErrWindowLarge):
		c.Err(ErrMemWindowLarge)
	case errors.Is(err, agentmem.ErrVector), errors.Is(err, vector.ErrNaN), errors.Is(err, vector.ErrZero):
		c.Err(ErrMemVector)
	default:
		c.Err("ERR " + err.Error())
	}
}

// memVector reads VECTOR's value at args[i:] (FP32 blob | VALUES n v…) for a memory of dimension
// dim; n is the arguments consumed, 0 when it replied an error.
func memVector(c *Ctx, args [][]byte, i, dim int) (vec []float32, n int) {
	v, ok := parseVector(args, i, false)
	if !ok {
		c.Err(ErrVsetVectorSpec)
		return nil, 0
	}
	if len(v.vec) != dim {
		c.Errf(ErrMemVectorDim, len(v.vec), dim)
		return nil, 0
	}
	return v.vec, v.n
}

// memList reads "n v1 … vn" at args[i:]; n is the arguments consumed, 0 when it replied.
func memList(c *Ctx, args [][]byte, i int) (vals []string, n int) {
	if i >= len(args) {
		c.Err(ErrSyntax)
		return nil, 0
	}
	k, ok := ParseInt(args[i])
	if !ok || k < 1 || k > int64(len(args)-i-1) {
		c.Err(ErrMemCount)
		return nil, 0
	}
	vals = make([]string, k)
	for j := range vals {
		vals[j] = string(args[i+1+j])
	}
	return vals, 1 + int(k)
}

// memTime reads a time in unix ms (>= 0).
func memTime(c *Ctx, b []byte) (int64, bool) {
	n, ok := ParseInt(b)
	if !ok || n < 0 {
		c.Err(ErrMemTime)
		return 0, false
	}
	return n, true
}

// appendFP32 encodes vec as an FP32 blob.
func appendFP32(dst []byte, vec []float32) []byte {
	for _, f := range vec {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
	}
	return dst
}

func fmtInt(n int64) []byte { return strconv.AppendInt(nil, n, 10) }

func fmtFloat(f float64) []byte { return strconv.AppendFloat(nil, f, 'g', 17, 64) }
