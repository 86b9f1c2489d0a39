package main

import "testing"

// --in-order sends a command sequence from its first command on every connection: MULTI, SET,
// INCR, EXEC, each reply checked against Redis's (+QUEUED inside the transaction). Without it
// the connections start at different places and the expectations fail.
func TestRunInOrderTransactions(t *testing.T) {
	port := startRedis(t)
	args := []string{"--keys", "100", "--clients", "4", "--pipeline", "8", "--requests", "800",
		"--command", "MULTI", "--expect", "ok", "--command", "SET key:__key__ __data__", "--expect", "simple:QUEUED",
		"--command", "INCR n:__key__", "--expect", "simple:QUEUED", "--command", "EXEC", "--expect", "array:2"}
	res, err := run(testConfig(t, port, append([]string{"--in-order"}, args...)...))
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops != 800 || res.PerCommand[3].Ops != 200 {
		t.Fatalf("ops %d, per command %+v", res.Ops, res.PerCommand)
	}
	if _, err := run(testConfig(t, port, args...)); err == nil {
		t.Fatal("without --in-order the connections' sequences start out of place, and a reply must differ")
	}
}
