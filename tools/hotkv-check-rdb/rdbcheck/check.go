// Package rdbcheck is the body of hotkv-check-rdb: it reads a whole RDB file
// with persist/rdb's Decoder and reports what redis-check-rdb 7.0.15 reports
// (aux fields, databases, keys, expires, the checksum or the first error with
// its offset), plus the version, key counts per type and encoding and the
// function libraries. hotkv-check-aof uses it for RDB bases and preambles.
//
// Memory follows the Decoder's: one record at a time, nothing sized by a
// length the file declares.
package rdbcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/persist/rdb"
)

// Report is what a check found. Offsets are bytes from the start of the file.
type Report struct {
	File      string      `json:"file"`
	Size      int64       `json:"size"`
	Version   int         `json:"version"`
	Aux       []Aux       `json:"aux"`
	DBs       []DB        `json:"dbs"`
	Types     []TypeCount `json:"types"`
	Functions []string    `json:"functions"`
	Keys      int64       `json:"keys"`
	Expires   int64       `json:"expires"`
	Expired   int64       `json:"already_expired"` // expiry before Options.Now, as redis-check-rdb counts them
	OK        bool        `json:"ok"`
	Checksum  string      `json:"checksum,omitempty"` // the file's CRC64 (16 hex digits); "0" when saved with rdbchecksum no
	End       int64       `json:"end"`                // offset after the checksum (where an AOF preamble's tail starts)
	Error     *Failure    `json:"error,omitempty"`
	Seconds   float64     `json:"seconds"`
}

// Aux is an auxiliary field, in file order.
type Aux struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// DB is one database as the file holds it.
type DB struct {
	ID          int   `json:"id"`
	Keys        int64 `json:"keys"`
	Expires     int64 `json:"expires"`
	HintKeys    int64 `json:"resize_keys"`    // RESIZEDB's declared sizes (-1: none)
	HintExpires int64 `json:"resize_expires"` //
}

// TypeCount is how many keys have one type and on-disk encoding.
type TypeCount struct {
	Type     string `json:"type"`     // string, list, set, zset, hash, stream
	Encoding string `json:"encoding"` // raw, int, lzf, quicklist, listpack, ziplist, intset, hashtable, skiplist, zipmap, ...
	RDBType  byte   `json:"rdb_type"`
	Keys     int64  `json:"keys"`
}

// Failure is the first error.
type Failure struct {
	Offset  int64  `json:"offset"` // where the decoder detected it
	Kind    string `json:"kind"`   // truncated, corrupt, checksum, unsupported, io
	Message string `json:"message"`
	LastKey string `json:"last_key,omitempty"` // the last key read whole before the error ("" if none)
	LastDB  int    `json:"last_db"`
	Type    string `json:"last_type,omitempty"` // its type/encoding
	// Reading is the key whose value was being read (redis-check-rdb's
	// "Reading key"), when the failed record is a key whose name is whole.
	Reading     string `json:"reading_key,omitempty"`
	ReadingType string `json:"reading_type,omitempty"` // its RDB type byte and name, e.g. "18 (list-quicklist-2)"
	RecordStart int64  `json:"record_start"`           // where the failed record begins
}

// Options are a check's settings.
type Options struct {
	// Progress, when set, is called as bytes are consumed (often: the callee rate-limits).
	Progress func(done int64)
	// Now decides "already expired" (default time.Now).
	Now func() time.Time
}

// offsetRE finds the offset every persist/rdb error names ("at offset N", "(offset N)").
var offsetRE = regexp.MustCompile(`offset (\d+)`)

// prefixRE is what Failure.Message leaves out: the package and the offset it reports apart.
var prefixRE = regexp.MustCompile(`^rdb: (corrupt( at offset \d+)?: )?`)

// Check reads the RDB at the start of ra (size bytes) to its end and checksum.
// The report is complete for what was read; Report.OK says whether the whole
// file (up to End) is sound. Bytes after End are not looked at: an AOF
// preamble's tail starts there.
func Check(name string, ra io.ReaderAt, size int64, opts Options) *Report {
	start := time.Now()
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	rep := &Report{File: name, Size: size, Aux: []Aux{}, DBs: []DB{}, Types: []TypeCount{}, Functions: []string{}}
	cr := &counter{r: io.NewSectionReader(ra, 0, size), progress: opts.Progress}
	c := checker{rep: rep, dec: rdb.NewDecoder(cr), nowMs: now().UnixMilli(), db: -1}
	err := c.run()
	rep.Seconds = time.Since(start).Seconds()
	if err == nil {
		rep.OK = true
		rep.End = c.dec.Offset()
		rep.Checksum = checksum(ra, rep.End, c.dec.Version())
		c.finishTypes()
		return rep
	}
	c.finishTypes()
	rep.Error = c.failure(err)
	rep.Error.RecordStart = c.recStart
	if key, typ, ok := pendingKey(ra, c.recStart, size); ok {
		rep.Error.Reading, rep.Error.ReadingType = key, fmt.Sprintf("%d (%s)", typ, typeNames[typ])
	}
	rep.End = rep.Error.Offset
	return rep
}

// checksum is the file's stored CRC64, the 8 bytes before end (versions 5+).
func checksum(ra io.ReaderAt, end int64, version int) string {
	if version < 5 || end < 8 {
		return ""
	}
	var b [8]byte
	if _, err := ra.ReadAt(b[:], end-8); err != nil {
		return ""
	}
	v := binary.LittleEndian.Uint64(b[:])
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%016x", v)
}

type checker struct {
	rep      *Report
	dec      *rdb.Decoder
	nowMs    int64
	db       int // index into rep.DBs; -1 before the first SELECTDB
	lastKey  []byte
	lastDB   int
	lastTyp  string
	recStart int64               // where the record being read began
	types    map[TypeCount]int64 // key counts by type and encoding (Keys zero)
}

func (c *checker) run() error {
	c.types = map[TypeCount]int64{}
	for {
		c.recStart = c.dec.Offset()
		rec, err := c.dec.Next()
		if c.rep.Version == 0 {
			c.rep.Version = c.dec.Version()
		}
		if c.recStart == 0 && c.rep.Version > 0 {
			c.recStart = 9 // the first record follows "REDIS" and four digits
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		c.record(rec)
	}
}

func (c *checker) record(rec *rdb.Record) {
	switch rec.Kind {
	case rdb.RecAux:
		c.rep.Aux = append(c.rep.Aux, Aux{Key: string(rec.AuxKey), Value: string(rec.AuxVal)})
	case rdb.RecSelectDB:
		c.selectDB(rec.DB)
	case rdb.RecResizeDB:
		c.current().HintKeys, c.current().HintExpires = int64(rec.DBKeys), int64(rec.DBExpires)
	case rdb.RecFunction:
		c.rep.Functions = append(c.rep.Functions, libraryName(rec.Code))
	case rdb.RecKey:
		c.key(rec)
	}
}

func (c *checker) selectDB(id int) {
	for i := range c.rep.DBs {
		if c.rep.DBs[i].ID == id {
			c.db = i
			return
		}
	}
	c.rep.DBs = append(c.rep.DBs, DB{ID: id, HintKeys: -1, HintExpires: -1})
	c.db = len(c.rep.DBs) - 1
}

// current is the selected database; keys before any SELECTDB belong to 0, as Redis loads them.
func (c *checker) current() *DB {
	if c.db < 0 {
		c.selectDB(0)
	}
	return &c.rep.DBs[c.db]
}

func (c *checker) key(rec *rdb.Record) {
	db := c.current()
	db.Keys++
	c.rep.Keys++
	if rec.ExpireMs >= 0 {
		db.Expires++
		c.rep.Expires++
		if rec.ExpireMs < c.nowMs {
			c.rep.Expired++
		}
	}
	tc := TypeCount{Type: typeName(rec.Value.Type), Encoding: rec.Value.Encoding, RDBType: rec.Value.RDBType}
	c.types[tc]++
	c.lastKey = append(c.lastKey[:0], rec.Key...)
	c.lastDB = db.ID
	c.lastTyp = tc.Type + "/" + tc.Encoding
}

func (c *checker) finishTypes() {
	for tc, n := range c.types {
		tc.Keys = n
		c.rep.Types = append(c.rep.Types, tc)
	}
	slices.SortFunc(c.rep.Types, func(a, b TypeCount) int {
		if a.Type != b.Type {
			return cmpString(a.Type, b.Type)
		}
		return cmpString(a.Encoding, b.Encoding)
	})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (c *checker) failure(err error) *Failure {
	f := &Failure{Offset: c.dec.Offset(), Message: err.Error(), Kind: "corrupt", LastKey: string(c.lastKey), LastDB: c.lastDB, Type: c.lastTyp}
	if m := offsetRE.FindStringSubmatch(err.Error()); m != nil {
		if n, perr := strconv.ParseInt(m[1], 10, 64); perr == nil {
			f.Offset = n
		}
	}
	msg := err.Error()
	f.Message = prefixRE.ReplaceAllString(msg, "")
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		f.Kind = "truncated"
	case errors.Is(err, rdb.ErrModuleAux), errors.Is(err, rdb.ErrModuleType), errors.Is(err, rdb.ErrFunctionPre):
		f.Kind = "unsupported"
	case !errors.Is(err, rdb.ErrCorrupt):
		f.Kind = "io"
	case bytes.Contains([]byte(msg), []byte("checksum mismatch")):
		f.Kind = "checksum"
	}
	return f
}

func typeName(t rdb.ValueType) string {
	switch t {
	case rdb.ValString:
		return "string"
	case rdb.ValList:
		return "list"
	case rdb.ValSet:
		return "set"
	case rdb.ValZSet:
		return "zset"
	case rdb.ValHash:
		return "hash"
	case rdb.ValStream:
		return "stream"
	}
	return "unknown"
}

// libraryName is the name in a library's shebang ("#!lua name=mylib ..."), or
// "?" when the code has none.
func libraryName(code []byte) string {
	line, _, _ := bytes.Cut(code, []byte("\n"))
	for _, f := range bytes.Fields(line) {
		if name, ok := bytes.CutPrefix(f, []byte("name=")); ok {
			return string(name)
		}
	}
	return "?"
}

// counter reports progress as the decoder pulls bytes.
type counter struct {
	r        io.Reader
	n        int64
	progress func(int64)
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil {
		c.progress(c.n)
	}
	return n, err
}
