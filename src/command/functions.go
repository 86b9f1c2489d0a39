package command

import (
	"time"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/src/script"
)

// Functions: FCALL, FCALL_RO and FUNCTION, on src/script's library registry. FCALL runs as EVAL
// does (scripting.go). FUNCTION LOAD, DELETE, FLUSH and RESTORE hold every shard (ScopeAll): a
// change of the libraries is ordered with the writes around it and replicated as itself.

var functionCommands = []*Spec{
	{Name: "fcall", Arity: -3, Flags: NoScript | Stale | SkipMonitor | NoMandatoryKeys | MovableKeys | MayReplicate,
		NumKeys: 2, Scope: ScopeSelf, Run: func(c *Ctx) { fcallGeneric(c, false) }},
	{Name: "fcall_ro", Arity: -3, Flags: ReadOnly | NoScript | Stale | SkipMonitor | NoMandatoryKeys | MovableKeys,
		NumKeys: 2, Scope: ScopeSelf, Run: func(c *Ctx) { fcallGeneric(c, true) }},
	(&Spec{Name: "function", Arity: -2, Scope: ScopeConn}).sub(
		&Spec{Name: "function|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: functionHelp},
		&Spec{Name: "function|list", Arity: -2, Flags: NoScript, Scope: ScopeConn, Run: functionList},
		&Spec{Name: "function|load", Arity: -3, Flags: Write | DenyOOM | NoScript, Scope: ScopeAll, Run: functionLoad},
		&Spec{Name: "function|flush", Arity: -2, Flags: Write | NoScript, Scope: ScopeAll, Run: functionFlush},
		&Spec{Name: "function|delete", Arity: 3, Flags: Write | NoScript, Scope: ScopeAll, Run: functionDelete},
		&Spec{Name: "function|dump", Arity: 2, Flags: NoScript, Scope: ScopeConn, Run: functionDump},
		&Spec{Name: "function|restore", Arity: -3, Flags: Write | DenyOOM | NoScript, Scope: ScopeAll, Run: functionRestore},
		&Spec{Name: "function|kill", Arity: 2, Flags: NoScript | AllowBusy, Scope: ScopeConn, Run: functionKill},
		&Spec{Name: "function|stats", Arity: 2, Flags: NoScript | AllowBusy, Scope: ScopeConn, Run: functionStats},
	),
}

// FCALL function numkeys [key ...] [arg ...]; FCALL_RO
func fcallGeneric(c *Ctx, ro bool) {
	f, ok := c.E.Scripts().LookupFunction(c.Args[1])
	if !ok {
		c.Err(ErrFunctionNotFound)
		return
	}
	n, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrBadNumKeys)
		return
	case n > int64(len(c.Args)-3):
		c.Err(ErrNumKeysGreater)
		return
	case n < 0:
		c.Err(ErrNumKeysNegative)
		return
	}
	j := scriptJob{fn: c.Args[1], flags: f.Flags, id: "f:" + f.Name, keys: c.Args[3 : 3+n], args: c.Args[3+n:],
		opts: script.RunOptions{Proto: c.Proto, ReadOnly: ro}, hint: &f.Hint}
	c.E.runScript(c, &j)
}

// loadHost is the Host of a library's load: its code may only log (redis.call is not in its
// environment).
type loadHost struct{}

func (loadHost) Command([][]byte) script.Command { return 0 }
func (loadHost) Call(_ [][]byte, _ int, _ script.Repl, dst []byte) []byte {
	return resp.AppendError(dst, "ERR redis.call is not available while loading a library")
}
func (loadHost) Allowed([][]byte) bool     { return false }
func (loadHost) Log(level int, msg string) { scriptLog(level, msg) }

// FUNCTION LOAD [REPLACE] function-code
func functionLoad(c *Ctx) {
	replace, i := false, 2
	for ; i < len(c.Args)-1; i++ {
		if !strs.EqualFold(c.Args[i], "REPLACE") {
			c.Errf(ErrFunctionLoadOption, c.Args[i])
			return
		}
		replace = true
	}
	name, msg := c.E.Scripts().FunctionLoad(loadHost{}, c.Args[i], replace)
	if msg != "" {
		c.Err(msg)
		return
	}
	c.Dirty(1)
	c.BulkString(name)
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]
func functionList(c *Ctx) {
	withCode, named := false, false
	var pattern []byte
	for i := 2; i < len(c.Args); i++ {
		switch a := c.Args[i]; {
		case !withCode && strs.EqualFold(a, "WITHCODE"):
			withCode = true
		case !named && strs.EqualFold(a, "LIBRARYNAME"):
			if i == len(c.Args)-1 {
				c.Err(ErrFunctionLibName)
				return
			}
			named = true
			i++
			pattern = c.Args[i]
		default:
			c.Errf(ErrFunctionUnknown, a)
			return
		}
	}
	libs := c.E.Scripts().FunctionList(pattern)
	c.ArrayLen(len(libs))
	for _, lib := range libs {
		n := 3
		if withCode {
			n = 4
		}
		c.MapLen(n)
		c.BulkString("library_name")
		c.BulkString(lib.Name)
		c.BulkString("engine")
		c.BulkString("LUA")
		c.BulkString("functions")
		c.ArrayLen(len(lib.Functions))
		for _, f := range lib.Functions {
			appendFunction(c, f)
		}
		if withCode {
			c.BulkString("library_code")
			c.Bulk(lib.Code)
		}
	}
}

// appendFunction is one function of FUNCTION LIST: its flags are status replies, as Redis's.
func appendFunction(c *Ctx, f *script.Function) {
	c.MapLen(3)
	c.BulkString("name")
	c.BulkString(f.Name)
	c.BulkString("description")
	if f.HasDescription {
		c.BulkString(f.Description)
	} else {
		c.Null()
	}
	c.BulkString("flags")
	names := f.Flags.Names()
	c.SetLen(len(names))
	for _, n := range names {
		c.Simple(n)
	}
}

// FUNCTION FLUSH [ASYNC|SYNC]
func functionFlush(c *Ctx) {
	switch {
	case len(c.Args) > 3:
		c.Errf(ErrSubSyntax, c.Args[1], "FUNCTION")
	case len(c.Args) == 3 && !strs.EqualFold(c.Args[2], "ASYNC") && !strs.EqualFold(c.Args[2], "SYNC"):
		c.Err(ErrFunctionFlushArg)
	default:
		c.E.Scripts().FunctionFlush()
		c.Dirty(1)
		c.OK()
	}
}

// FUNCTION DELETE library-name
func functionDelete(c *Ctx) {
	if msg := c.E.Scripts().FunctionDelete(c.Args[2]); msg != "" {
		c.Err(msg)
		return
	}
	c.Dirty(1)
	c.OK()
}

// FUNCTION DUMP
func functionDump(c *Ctx) { c.Bulk(c.E.Scripts().FunctionDump()) }

// FUNCTION RESTORE serialized-value [FLUSH|APPEND|REPLACE]
func functionRestore(c *Ctx) {
	if len(c.Args) > 4 {
		c.Errf(ErrSubSyntax, c.Args[1], "FUNCTION")
		return
	}
	policy, msg := script.RestoreAppend, ""
	if len(c.Args) == 4 {
		policy, msg = script.ParseRestorePolicy(c.Args[3])
	}
	if msg == "" {
		msg = c.E.Scripts().FunctionRestore(loadHost{}, c.Args[2], policy)
	}
	if msg != "" {
		c.Err(msg)
		return
	}
	c.Dirty(1)
	c.OK()
}

// FUNCTION KILL
func functionKill(c *Ctx) { killGeneric(c, true) }

// FUNCTION STATS
func functionStats(c *Ctx) {
	for _, r := range c.E.Scripts().Running() {
		if r.Script != nil && r.Busy { // Redis 7.0.15 answers BUSY while an EVAL is busy
			c.Err(script.ErrBusyScript)
			return
		}
	}
	c.MapLen(2)
	c.BulkString("running_script")
	if !c.E.appendRunning(c) {
		c.Null()
	}
	libs, fns := c.E.Scripts().FunctionCounts()
	c.BulkString("engines")
	c.MapLen(1)
	c.BulkString("LUA")
	c.MapLen(2)
	c.BulkString("libraries_count")
	c.Int(int64(libs))
	c.BulkString("functions_count")
	c.Int(int64(fns))
}

// appendRunning appends FUNCTION STATS's running_script for the first function in progress:
// its name, its command and how long it has run, as the watchdog measured it. EVAL scripts are
// not shown (Redis answers BUSY while one is busy, and cannot show one that is not).
func (e *Engine) appendRunning(c *Ctx) bool {
	var r script.Running
	for _, run := range e.Scripts().Running() {
		if run.Function != nil {
			r = run
			break
		}
	}
	if r.Function == nil {
		return false
	}
	c.MapLen(3)
	c.BulkString("name")
	c.BulkString(r.Function.Name)
	c.BulkString("command")
	c.Out = append(c.Out, e.runningCommand(r)...)
	c.BulkString("duration_ms")
	c.Int(int64(r.Duration / time.Millisecond))
	return true
}

var functionHelpLines = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}

// FUNCTION HELP
func functionHelp(c *Ctx) { replyHelpLines(c, functionHelpLines) }
