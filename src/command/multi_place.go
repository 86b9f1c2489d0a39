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
	for i := range tx.cmds {
		if spec := tx.cmds[i].spec; spec.Scope != ScopeKeys || runsScript(spec) {
			return pipeline.TargetBarrier
		}
	}
	shards, all := e.txShards(cl)
	if all || len(shards) != 1 {
		return pipeline.TargetBarrier
	}
	s.Ends = true
	return pipeline.Target(shards[0])
}
