// Command hotkv-check-aof checks an append-only file as redis-check-aof 7.0.15
// does: a Redis 7 multi-part AOF given by its manifest (the base, an RDB or a
// command stream, then the INCR files in order) or a single old-style file
// (with or without an RDB preamble). It reports each file's commands and the
// first error with its offset, and tells a torn tail from damage in the
// middle. Exit status 0 when everything is valid (or was fixed), 1 otherwise.
//
//	hotkv-check-aof [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>
//
// --fix truncates the last file to its last whole command after asking
// "Continue? [y/N]" on stdin; damage followed by valid commands asks again,
// saying how much would be lost. --truncate-to-timestamp cuts the last file
// before its first "#TS:" annotation later than the timestamp. Files over
// 64 MB show their progress on stderr, as hotkv-check-rdb's.
package main

import (
	"os"

	"github.com/hotkv/hotkv/tools/hotkv-check-aof/aofcheck"
)

func main() {
	os.Exit(aofcheck.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
