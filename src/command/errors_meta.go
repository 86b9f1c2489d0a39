package command

// Wire errors of the COMMAND and CONFIG families: Redis 7.0's exact bytes, without the leading '-'
// and trailing CRLF.
const (
	ErrInvalidCommand   = "ERR Invalid command specified"
	ErrNoKeyArguments   = "ERR The command has no key arguments"
	ErrInvalidArgCount  = "ERR Invalid number of arguments specified for command"
	ErrInvalidArguments = "ERR Invalid arguments specified for command"
	ErrConfigSetUnknown = "ERR Unknown option or number of arguments for CONFIG SET - '%s'"
	ErrNoConfigFile     = "ERR The server is running without a config file"
)
