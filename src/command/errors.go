package command

// Wire errors: the exact bytes Redis 7.0 replies, without the leading '-' and trailing CRLF.
// Every error string a handler sends is defined here.
const (
	ErrSyntax        = "ERR syntax error"
	ErrWrongType     = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrNotInt        = "ERR value is not an integer or out of range"
	ErrNotFloat      = "ERR value is not a valid float"
	ErrOverflow      = "ERR increment or decrement would overflow"
	ErrIncrNaNInf    = "ERR increment would produce NaN or Infinity"
	ErrNoSuchKey     = "ERR no such key"
	ErrInvalidExpire = "ERR invalid expire time in '%s' command"
	ErrDBIndex       = "ERR DB index is out of range"
	ErrSameObject    = "ERR source and destination objects are the same"
	ErrStringMax     = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrOffsetRange   = "ERR offset is out of range"
	ErrNoAuth        = "NOAUTH Authentication required."
	ErrWrongPass     = "WRONGPASS invalid username-password pair or user is disabled."
	ErrAuthNoPass    = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	ErrNoProto       = "NOPROTO unsupported protocol version"
	ErrUnknownCmd    = "ERR unknown command '%s', with args beginning with: %s"
	ErrUnknownSub    = "ERR unknown subcommand '%s'. Try %s HELP."
	ErrArity         = "ERR wrong number of arguments for '%s' command"
	ErrNXXX          = "ERR XX and NX options at the same time are not compatible"
	ErrGTLTNX        = "ERR GT, LT, and/or NX options at the same time are not compatible"
	ErrNoCluster     = "ERR This instance has cluster support disabled"
	ErrTimeout       = "ERR timeout is not an integer or out of range"
	ErrTimeoutNeg    = "ERR timeout is negative"
	ErrTimeoutFloat  = "ERR timeout is not a float or out of range"
	ErrSelectNotInt  = "ERR value is not an integer or out of range"
)
