// Package config holds HotKV's configuration with Redis 7.0.15's behaviour:
// the directive table (every name CONFIG GET * shows in Redis, plus
// HotKV's own), redis.conf parsing, the redis-server command line, and
// the data behind CONFIG GET, SET, REWRITE and RESETSTAT. It returns Go
// values and Redis's exact error texts; encoding replies is the command
// layer's job. It also has Glob, Redis's glob matcher, for KEYS, SCAN
// MATCH and pattern subscriptions.
//
// Invariants:
//
//  1. A published snapshot (Store.Current) is never modified; readers take
//     no lock and see every CONFIG SET entirely or not at all.
//  2. CONFIG SET is atomic: names are checked, then values parsed into a
//     copy, then apply hooks run; any failure leaves the old snapshot.
//  3. Writers (Set, Rewrite) are serialized; hooks run under that lock, in
//     order, and must not call back into Set or Rewrite.
//  4. Directive names are case-insensitive; a directive and its alias are
//     separate names, as in Redis (both listed, both settable at once).
package config
