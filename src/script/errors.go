package script

// Wire errors, Redis 7.0.15's exact texts (without the leading '-' and CRLF, which the
// encoder adds). The command layer replies with these where the engine tells it to.
const (
	ErrNoScript       = "NOSCRIPT No matching script. Please use EVAL."
	ErrNotBusy        = "NOTBUSY No scripts in execution right now."
	ErrUnkillable     = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	ErrBusyScript     = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	ErrBusyFunction   = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	errCompilePrefix  = "ERR Error compiling script (new function): "
	errKilled         = "ERR Script killed by user with SCRIPT KILL..."
	errOutOfMemory    = "ERR Script exceeded lua-max-memory, stopped"
	errStopped        = "ERR Script ended: the server is shutting down" // HotKV's own (StopRuns)
	errUnknownCommand = "ERR Unknown Redis command called from script"
	errWrongArity     = "ERR Wrong number of args calling Redis command from script"
	errNoScriptCmd    = "ERR This Redis command is not allowed from script"
	errArgType        = "ERR Lua redis lib command arguments must be strings or integers"
	errNoArgs         = "ERR Please specify at least one argument for this redis lib call"
	errReadOnly       = "ERR Write commands are not allowed from read-only scripts."
	errBadACLCommand  = "ERR Invalid command passed to redis.acl_check_cmd()"
	errReadonlyTable  = "Attempt to modify a readonly table"
	errNoGlobal       = "Script attempted to access nonexistent global variable '%s'"
)

// Shebang errors (EVAL with "#!...").
const (
	errShebangInvalid = "ERR Invalid script shebang"
	errShebangEngine  = "ERR Unexpected engine in script shebang: "
	errShebangFlag    = "ERR Unexpected flag in script shebang: "
	errShebangOption  = "ERR Unknown lua shebang option: "
)
