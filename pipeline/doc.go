// Package pipeline runs commands through four stages: parse, route, execute, encode.
//
// A connection's readable bytes are parsed into a Batch of Slots (arguments alias the read
// buffer), each slot is routed to a target (the connection itself, a barrier, or one shard), the
// shard-targeted slots are grouped per shard and handed to the shard actors through their
// mailboxes, and the replies are appended in request order to the connection's output and
// written once per batch.
//
// Invariants (each has a test in this package or in testfuzz/):
//
//  1. Replies leave in request order on every connection: a slot's reply is written into the slot
//     and slots are encoded in order.
//  2. Every command is atomic: a shard runs one slot at a time while holding its token; a command
//     that spans shards takes all their tokens, in ascending shard order, before it starts. A
//     slot marked Shared (a read of one key) may instead run while nobody holds the token, beside
//     other shared slots; a token taker waits for such readers to leave (shared.go).
//  3. A write acknowledged to one client is visible to every command that starts after the
//     acknowledgement: replies are written only after the batch's work has completed.
//  4. No queue drops work: a connection has at most one batch in flight and waits for it, so a
//     busy shard stops its clients from reading (backpressure).
//  5. Shard data is changed only by the holder of the shard's token, and read by it or, while
//     nobody holds it, by shared readers.
//  6. Execute does no I/O and never blocks while holding a token.
//  7. Bytes borrowed from a read buffer never outlive their batch: the transport buffer is
//     released only after the batch's replies are encoded.
//  8. A panic while serving a batch closes that client with an error; the server keeps serving.
//     A panic in a shard's work (or in Warm) is caught where it ran, on whichever goroutine held
//     the token, so the token is released and the shard's other work still runs; the batch's
//     flush raises it again once all its work is done, and Conn.Serve recovers it.
//
// Commands that touch no shard (PING, SELECT, HELLO, CLIENT SETNAME, …) run on the connection
// while the batch is routed, so state they change (database, protocol) applies to the commands
// after them. Commands that span shards or read every shard run as barriers: the connection first
// waits for every earlier slot of its batch, then runs the barrier itself, locking what it needs.
package pipeline
