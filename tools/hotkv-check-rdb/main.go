// Command hotkv-check-rdb checks an RDB file as redis-check-rdb does: it reads
// the whole file and reports the version, aux fields, databases, keys per type
// and encoding, function libraries, and either "RDB looks OK" with the
// checksum or the first error with its offset and the last key read. Exit
// status 0 when the file is sound, 1 otherwise (and for usage errors).
//
//	hotkv-check-rdb [--json] <file.rdb>
//
// Files over 64 MB show their progress on stderr: a bar when stderr is a
// terminal, else a line every 3 seconds.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hotkv/hotkv/tools/hotkv-check-rdb/rdbcheck"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout io.Writer, stderr *os.File) int {
	asJSON := false
	var file string
	for _, a := range args {
		switch {
		case a == "--json" || a == "-json":
			asJSON = true
		case file == "" && (len(a) == 0 || a[0] != '-'):
			file = a
		default:
			file = ""
			args = nil
		}
	}
	if file == "" || args == nil {
		fmt.Fprintln(stdout, "Usage: hotkv-check-rdb [--json] <rdb-file-name>")
		return 1
	}
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintf(stdout, "Cannot open file %s: %v\n", file, err)
		return 1
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		fmt.Fprintf(stdout, "Cannot stat file %s: %v\n", file, err)
		return 1
	}
	var opts rdbcheck.Options
	var prog *rdbcheck.Progress
	if st.Size() > rdbcheck.ProgressMin && stderr != nil {
		prog = rdbcheck.NewProgress(stderr, st.Size())
		opts.Progress = prog.Update
	}
	rep := rdbcheck.Check(file, f, st.Size(), opts)
	if prog != nil {
		prog.Finish()
	}
	if asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		rep.WriteText(stdout)
	}
	if !rep.OK {
		return 1
	}
	return 0
}
