package command

import "github.com/hotkv/hotkv/pipeline"

// EXEC on one shard. A transaction whose queued commands are all keyed commands (no script,
// connection command or command that needs every shard or picks its own), whose keys and
// watched keys all hash to one shard, is routed to that shard as a keyed command is: the
// shard's executor runs it holding the token EXEC would otherwise take (execCmd, onShard),
// between that shard's other work, while the connection's commands on other shards run beside
// it. Everything else about EXEC is unchanged: the watches are checked under the token, the
// queued commands run in order through call, their effects go out as one MULTI … EXEC entry.
// A DEBUG or MIGRATE in the queue (mayWait), an aborted queue or an open cluster slot keep the
// barrier.

// execTarget is route's target for EXEC: its one shard when the transaction qualifies, else
// a barrier. The slot Ends its segment: the commands after EXEC are routed once it has run
// (they are no longer queued, and EXEC changes the client's state on the shard's goroutine).
func (e *Engine) execTarget(cl *Client, s *pipeline.Slot) pipeline.Target {
	tx := &cl.tx
	if !tx.on || tx.dirtyExec || tx.mayWait || len(tx.cmds) == 0 || cl.cluster.open != SlotStable {
		return pipeline.TargetBarrier
	}
	one := int32(-1) // the one shard so far; the scan stops at a second
	same := func(id int32) bool {
		if one < 0 {
			one = id
		}
		return id == one
	}
	for _, w := range tx.watched {
		if !same(w.shard) {
			return pipeline.TargetBarrier
		}
	}
	for i := range tx.cmds {
		cmd := &tx.cmds[i]
		if cmd.spec.Scope != ScopeKeys || runsScript(cmd.spec) {
			return pipeline.TargetBarrier
		}
		args := tx.args(cmd)
		tx.keyPos = cmd.spec.keyIndexes(args, tx.keyPos[:0])
		if len(tx.keyPos) == 0 {
			return pipeline.TargetBarrier // a command that picks its own shards (txShards)
		}
		for _, p := range tx.keyPos {
			if !same(e.shardOf(args[p])) {
				return pipeline.TargetBarrier
			}
		}
	}
	s.Ends = true
	return pipeline.Target(one)
}
