package script

// Host is what the engine needs of the server while a script runs. The engine calls it only
// from the goroutine inside Run or FCall, one call at a time, never after that call returned.
type Host interface {
	// Command describes the command args[0] names (any case) given these arguments: whether
	// it exists, whether the argument count fits its arity, and its flags. The engine refuses
	// unknown commands, wrong arity, no-script commands and (in read-only runs) writes with
	// Redis's texts before calling Call.
	Command(args [][]byte) Command
	// Call runs one command for redis.call/redis.pcall and appends its RESP reply, in protocol
	// proto (2 or 3, as the script chose with redis.setresp), to dst. The Host makes every
	// other check Redis's scriptCall makes (ACL, OOM, cluster, replica) and answers with the
	// error reply. repl is the script's redis.set_repl choice for this command's propagation.
	// args and their bytes are valid only until Call returns: the Host copies what it keeps.
	Call(args [][]byte, proto int, repl Repl, dst []byte) []byte
	// Allowed answers redis.acl_check_cmd: whether the calling user may run args.
	Allowed(args [][]byte) bool
	// Log writes msg to the server log at level (LogDebug..LogWarning); the Host filters by
	// its verbosity.
	Log(level int, msg string)
}

// Command is a command's description for the engine (Host.Command).
type Command uint8

const (
	CommandKnown    Command = 1 << iota // the name is a command
	CommandArityOK                      // the argument count fits its arity
	CommandWrite                        // it may write (Redis's CMD_WRITE)
	CommandNoScript                     // it may not run from a script (Redis's CMD_NOSCRIPT)
)

// Repl is redis.set_repl's choice: where the effects of the following commands propagate.
type Repl uint8

const (
	ReplNone    Repl = 0
	ReplAOF     Repl = 1
	ReplReplica Repl = 2
	ReplAll     Repl = ReplAOF | ReplReplica
)

// Log levels of redis.log, Redis's LL_* values.
const (
	LogDebug   = 0
	LogVerbose = 1
	LogNotice  = 2
	LogWarning = 3
)
