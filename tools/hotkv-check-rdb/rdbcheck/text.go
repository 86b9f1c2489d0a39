package rdbcheck

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteText writes the report as aligned "label  value" lines, the result last.
func (r *Report) WriteText(w io.Writer) {
	p := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-10s %s\n", label, fmt.Sprintf(format, args...))
	}
	p("file", "%s (%d bytes)", r.File, r.Size)
	if r.Version > 0 {
		p("version", "RDB %d", r.Version)
	}
	for _, a := range r.Aux {
		p("aux", "%s = %s", printable(a.Key), printable(a.Value))
	}
	if len(r.Functions) > 0 {
		p("functions", "%d: %s", len(r.Functions), strings.Join(r.Functions, ", "))
	}
	for _, db := range r.DBs {
		hint := ""
		if db.HintKeys >= 0 {
			hint = fmt.Sprintf(" (resize hint %d keys, %d expires)", db.HintKeys, db.HintExpires)
		}
		p(fmt.Sprintf("db %d", db.ID), "%d keys, %d expires%s", db.Keys, db.Expires, hint)
	}
	for _, t := range r.Types {
		p("type", "%-6s %-10s %d (RDB type %d)", t.Type, t.Encoding, t.Keys, t.RDBType)
	}
	p("keys", "%d read, %d with an expiry, %d already expired", r.Keys, r.Expires, r.Expired)
	if r.OK {
		switch r.Checksum {
		case "0":
			p("result", "RDB looks OK (%d bytes; no checksum: saved with rdbchecksum no)", r.End)
		case "":
			p("result", "RDB looks OK (%d bytes; version %d has no checksum)", r.End, r.Version)
		default:
			p("result", "RDB looks OK (%d bytes, CRC64 %s matches)", r.End, r.Checksum)
		}
		return
	}
	e := r.Error
	p("ERROR", "%s at offset %d: %s", e.Kind, e.Offset, e.Message)
	if e.Reading != "" {
		p("reading", "key %s of RDB type %s, in the record from offset %d", printable(e.Reading), e.ReadingType, e.RecordStart)
	}
	if e.LastKey != "" {
		p("last key", "%s in db %d (%s), read whole before the error", printable(e.LastKey), e.LastDB, e.Type)
	} else {
		p("last key", "none: the error comes before the first key")
	}
	p("result", "RDB is NOT valid")
}

// printable quotes s when it is not plain printable UTF-8.
func printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "'" + s + "'"
	}
	return strconv.Quote(s)
}
