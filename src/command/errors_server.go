package command

// Wire errors of the CLIENT, server (DBSIZE, FLUSHALL, SHUTDOWN, DEBUG, FUNCTION) and INFO
// families: Redis 7.0's exact bytes, without the leading '-' and trailing CRLF.
const (
	ErrSubSyntax        = "ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP."
	ErrInvalidClientID  = "ERR Invalid client ID"
	ErrClientIDRange    = "ERR client-id should be greater than 0"
	ErrUnknownClient    = "ERR Unknown client type '%s'"
	ErrNoSuchClient     = "ERR No such client"
	ErrNoSuchUser       = "ERR No such user '%s'"
	ErrPauseMode        = "ERR CLIENT PAUSE mode must be WRITE or ALL"
	ErrSetinfoOption    = "ERR Unrecognized option '%s'"
	ErrSetinfoChars     = "ERR %s cannot contain spaces, newlines or special characters."
	ErrNoShutdown       = "ERR No shutdown in progress."
	ErrShutdownFailed   = "ERR Errors trying to SHUTDOWN. Check logs."
	ErrDebugDisabled    = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`
	ErrFunctionFlushArg = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
	ErrFunctionLibName  = "ERR library name argument was not given"
	ErrFunctionUnknown  = "ERR Unknown argument %s"
	ErrLibraryNotFound  = "ERR Library not found"
	ErrNotBusy          = "NOTBUSY No scripts in execution right now."
)
