// Package resp reads Redis requests and writes Redis replies, byte for byte as Redis 7.0.15 does.
//
// Parse takes one command from the front of a read buffer without copying: the arguments it returns are
// sub-slices of that buffer and stay valid only while the buffer's bytes are neither reused nor moved
// (in the server: until the batch that holds the command is released). Parse is stateless; it never
// reserves memory for a length a client merely declares, so the limits of Limits are enforced as bytes
// arrive, the way Redis enforces them.
//
// Two deliberate readings of Redis's stateful parser, so that Parse's answer depends only on the bytes
// and never on how they were split into reads: a line (inline request, count header) that has no end
// within its first 64KB+1 bytes is "too big" as soon as that many bytes are buffered, which is what
// Redis answers when bytes trickle in (Redis reading a longer burst at once may still accept a line
// ending up to 16KB later); and, as in Redis, whose query buffer is a C string, a NUL byte hides the
// end of the line it is in, so such a request waits until the "too big" error.
//
// The Append functions encode replies into a caller's buffer in RESP2 or RESP3 (proto 2 or 3, as
// negotiated by HELLO), with Redis's RESP2 fallbacks for the RESP3-only types. None of them allocates
// when dst has room.
//
// ReadReply splits a stream of replies, for clients, tools and tests.
//
// Standard library only: this package imports nothing from the project.
package resp
