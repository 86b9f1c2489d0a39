// Package aof is Redis 7's multi-part append-only file: a manifest listing a base file (an RDB
// or a command stream) and INCR files of commands, the Writer that appends the write-effect
// feed's entries to the current INCR file under appendfsync always|everysec|no, the rewrite that
// swaps in a new base from a point-in-time snapshot, and Load, which replays it all. Files go
// through FS: OSFS on disk, CrashFS in tests, which models an OS crash.
//
// It imports the standard library and pipeline/feed only; the RDB codec, the snapshot and the
// keyspace come in as funcs (writeBase, loadBase, apply).
//
// Durability and ordering invariants:
//
//  1. Entries are written in feed sequence order, each once: the INCR files, read in manifest
//     order, hold every entry the writer has taken from the feed after the last base, in
//     order, each preceded by a SELECT when its database differs from the previous one in that
//     file (and at the start of every file).
//  2. Durable() only grows, and when it is n, every entry up to n is on disk under the policy:
//     fsynced (always), written (everysec, no). It moves only after the write (and, for always,
//     the fsync) that covers n has returned, so a WaitDurable that returned is never lost to a
//     crash under always. One fsync releases every waiter it covers (group commit).
//  3. After a write or fsync error, Err() is set and nothing more becomes durable until an
//     fsync that covers it succeeds (for every policy); Err() clears then. A short write is cut
//     back to the last good length, so a file never holds a partial command the writer goes on
//     after.
//  4. A rewrite at snapshot point at never loses an entry to a crash at any step: a new INCR
//     file for the entries after at is in a persisted manifest (after the old ones) before any
//     of them is written; the base is written to a temp file, fsynced and renamed; only then
//     does a persisted manifest list base(new) + incr(new), and only after that are the old files
//     deleted. Entries up to at that arrive later still go to the old file.
//  5. Every manifest change is a temp file, fsync, rename and fsync of the directory, so a crash
//     leaves either the old manifest or the new one.
//  6. After feed.ErrLost the writer appends nothing and Durable does not move past what it was,
//     until a rewrite from a new source installs its base; the new INCR file joins the manifest
//     only with that base, so a crash before it loads the old, gap-free files.
//  7. Load applies a prefix of what was written: a torn last command of the last file is cut
//     (aof-load-truncated) or is an error, a MULTI block without its EXEC is dropped, and any
//     other bad byte is an error at its offset. It reserves memory only for bytes that arrived.
package aof
