// Package testfuzz holds the tests that look at HotKV from the outside: loopback end-to-end tests over
// real sockets, a differential test that sends the same randomized command stream to HotKV and to
// redis-server 7.0.15 and compares every reply byte for byte, and client compatibility tests
// (redis-cli --pipe, go-redis).
//
// Everything lives in _test.go files; this file only names the package. The tests start HotKV in
// process (so they can measure its heap) and redis-server as a child process on a loopback port, and
// skip the Redis comparison with a message when redis-server is not on PATH.
package testfuzz
