package command

// Wire errors: the exact bytes Redis 7.0 replies (Redis 7.4's for the commands it added), without the
// leading '-' and trailing CRLF. Every error string a handler sends is defined here, once: a text
// two families reply is one constant, named for what it says, not for a family.
const (
	// Shared by several families.
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
	ErrNumkeys       = "ERR numkeys should be greater than 0"
	ErrCountPositive = "ERR count should be greater than 0"
	ErrPositive      = "ERR value is out of range, must be positive"
	ErrCountRange    = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	ErrLimitNegative = "ERR LIMIT can't be negative"
	ErrOutOfRange    = "ERR value is out of range"

	// Cluster mode (cluster.go).
	ErrCrossSlot        = "CROSSSLOT Keys in request don't hash to the same slot"
	ErrTryAgain         = "TRYAGAIN Multiple keys request during rehashing of slot"
	ErrSelectCluster    = "ERR SELECT is not allowed in cluster mode"
	ErrReplicaOfCluster = "ERR REPLICAOF not allowed in cluster mode."

	// ACL (acl.go, acl_check.go).
	ErrNoPermKey      = "NOPERM this user has no permissions to access one of the keys used as arguments"
	ErrNoPermChannel  = "NOPERM this user has no permissions to access one of the channels used as arguments"
	ErrNoPermCmd      = "NOPERM this user has no permissions to run the '%s' command"
	ErrACLModifier    = "ERR Error in ACL SETUSER modifier %s"
	ErrACLParen       = "ERR Unmatched parenthesis in acl selector starting at '%s'."
	ErrACLUserSpaces  = "ERR Usernames can't contain spaces or null characters"
	ErrACLNoFile      = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."
	ErrACLGenpass     = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"
	ErrACLUnknownCat  = "ERR Unknown category '%s'"
	ErrACLDryrunUser  = "ERR User '%s' not found"
	ErrACLDryrunCmd   = "ERR Command '%s' not found"
	ErrACLExecChanged = "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: %s"
	ErrACLScriptCmd   = "ERR The user executing the script can't run this command or subcommand"
	ErrACLScriptKey   = "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"
	ErrACLScriptChan  = "ERR The user executing the script can't publish to the channel mentioned in the command"
	ErrACLSave        = "ERR There was an error trying to save the ACLs. Please check the server logs for more information"

	// Connection (HELLO, CLIENT SETNAME).
	ErrProtoVersion = "ERR Protocol version is not an integer or out of range"
	ErrHelloOption  = "ERR Syntax error in HELLO option '%s'"
	ErrHelloNoAuth  = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	ErrClientName   = "ERR Client names cannot contain spaces, newlines or special characters."
	ErrInternal     = "ERR internal error"

	// Pub/sub.
	ErrSubscribedMode = "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"

	// Client-side caching (CLIENT TRACKING, CLIENT CACHING).
	ErrTrackingOneRedirect = "ERR A client can only redirect to a single other client"
	ErrTrackingNoRedirect  = "ERR The client ID you want redirect to does not exist"
	ErrTrackingPrefixBcast = "ERR PREFIX option requires BCAST mode to be enabled"
	ErrTrackingSwitchBcast = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	ErrTrackingBcastOpt    = "ERR OPTIN and OPTOUT are not compatible with BCAST"
	ErrTrackingOptinOptout = "ERR You can't specify both OPTIN mode and OPTOUT mode"
	ErrTrackingSwitchOpt   = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	ErrCachingNotTracking  = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
	ErrCachingYes          = "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
	ErrCachingNo           = "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."

	// Keys and expiry (DEL … SWAPDB, SCAN, OBJECT, EXPIRE …).
	ErrInvalidCursor   = "ERR invalid cursor"
	ErrIntArgRange     = "ERR value is out of range, value must between -2147483648 and 2147483647"
	ErrFirstDBIndex    = "ERR invalid first DB index"
	ErrSecondDBIndex   = "ERR invalid second DB index"
	ErrUnknownObject   = "ERR unknown type object"
	ErrExpireOption    = "ERR Unsupported option %s"
	ErrExpireNXAndMore = "ERR NX and XX, GT or LT options at the same time are not compatible"
	ErrExpireGTAndLT   = "ERR GT and LT options at the same time are not compatible"
	ErrOOM             = "OOM command not allowed when used memory > 'maxmemory'."
	ErrNoLFUPolicy     = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	ErrLFUPolicy       = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."

	// Strings.
	ErrDecrOverflow  = "ERR decrement would overflow"
	ErrLCSNotStrings = "ERR The specified keys must contain string values"
	ErrLCSLenAndIdx  = "ERR If you want both the length and indexes, please just use IDX."
	ErrLCSTooLong    = "ERR String too long for LCS"
	ErrLCSMemory     = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	ErrLCSAlloc      = "ERR Insufficient memory, failed allocating transient memory for LCS"

	// Lists.
	ErrListIndexRange = "ERR index out of range"
	ErrLPosRank       = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	ErrLPosCount      = "ERR COUNT can't be negative"
	ErrLPosMaxLen     = "ERR MAXLEN can't be negative"
	ErrUnblockReason  = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"

	// Hashes (Redis 7.4's for per-field expiry, HEXPIRE … HPERSIST).
	ErrHashNotInt       = "ERR hash value is not an integer"
	ErrHashNotFloat     = "ERR hash value is not a float"
	ErrHashNaNInf       = "ERR value is NaN or Infinity"
	ErrHashFieldsArg    = "ERR Mandatory argument FIELDS is missing or not at the right position"
	ErrHashExpireFields = "ERR Parameter `numFields` should be greater than 0"
	ErrHashNumFields    = "ERR Number of fields must be a positive integer"
	ErrHashFieldsCount  = "ERR The `numfields` parameter must match the number of arguments"
	ErrHashExpireNeg    = "ERR invalid expire time, must be >= 0"

	// Sets.
	ErrSetNumkeysArgs = "ERR Number of keys can't be greater than number of args"

	// Geo (geo.go, geo_search.go). ErrGeoLonLat is followed by " lon,lat" as printf's %f writes
	// them; ErrGeoStoreWith follows the option's name; ErrGeoFrom and ErrGeoBy the command's
	// name as the client wrote it.
	ErrGeoLonLat    = "ERR invalid longitude,latitude pair"
	ErrGeoUnit      = "ERR unsupported unit provided. please use M, KM, FT, MI"
	ErrGeoRadius    = "ERR need numeric radius"
	ErrGeoRadiusNeg = "ERR radius cannot be negative"
	ErrGeoWidth     = "ERR need numeric width"
	ErrGeoHeight    = "ERR need numeric height"
	ErrGeoBoxNeg    = "ERR height or width cannot be negative"
	ErrGeoMember    = "ERR could not decode requested zset member"
	ErrGeoCount     = "ERR COUNT must be > 0"
	ErrGeoStoreWith = " is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
	ErrGeoFrom      = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for "
	ErrGeoBy        = "ERR exactly one of BYRADIUS and BYBOX can be specified for "
	ErrGeoAny       = "ERR the ANY argument requires COUNT argument"

	// Sorted sets.
	ErrZIncrPairs     = "ERR INCR option supports a single increment-element pair"
	ErrZNaN           = "ERR resulting score is not a number (NaN)"
	ErrZMinMaxFloat   = "ERR min or max is not a float"
	ErrZMinMaxLex     = "ERR min or max not valid string range item"
	ErrZLimitRank     = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	ErrZWithscoresLex = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	ErrZNeedKey       = "ERR at least 1 input key is needed for '%s' command"
	ErrZWeightFloat   = "ERR weight value is not a float"

	// Transactions (multi.go, watch.go).
	ErrMultiNested    = "ERR MULTI calls can not be nested"
	ErrExecNoMulti    = "ERR EXEC without MULTI"
	ErrDiscardNoMulti = "ERR DISCARD without MULTI"
	ErrExecAbort      = "EXECABORT Transaction discarded because of previous errors."
	ErrWatchInMulti   = "ERR WATCH inside MULTI is not allowed"
	ErrNoMultiCmd     = "ERR Command not allowed inside a transaction"

	// Bitmaps and HyperLogLog.
	ErrBitOffset        = "ERR bit offset is not an integer or out of range"
	ErrBitValue         = "ERR bit is not an integer or out of range"
	ErrBitposBit        = "ERR The bit argument must be 1 or 0."
	ErrBitopNot         = "ERR BITOP NOT must be called with a single source key."
	ErrBitfieldType     = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	ErrBitfieldOverflow = "ERR Invalid OVERFLOW type specified"
	ErrBitfieldRO       = "ERR BITFIELD_RO only supports the GET subcommand"
	ErrHLLInvalid       = "INVALIDOBJ Corrupted HLL object detected"
	ErrHLLWrongType     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	ErrPFDebugNoKey     = "ERR The specified key does not exist"
	ErrPFDebugNotSparse = "ERR HLL encoding is not sparse"
	ErrPFDebugUnknown   = "ERR Unknown PFDEBUG subcommand '%s'"

	// SORT.
	// ErrSortWeight is replied when a weight (the element, or the BY key's value) of a numeric
	// sort is not a number strtod reads whole.
	ErrSortWeight = "ERR One or more scores can't be converted into double"

	// COMMAND and CONFIG.
	ErrInvalidCommand   = "ERR Invalid command specified"
	ErrNoKeyArguments   = "ERR The command has no key arguments"
	ErrInvalidArgCount  = "ERR Invalid number of arguments specified for command"
	ErrInvalidArguments = "ERR Invalid arguments specified for command"
	ErrConfigSetUnknown = "ERR Unknown option or number of arguments for CONFIG SET - '%s'"
	ErrNoConfigFile     = "ERR The server is running without a config file"

	// CLIENT, server (DBSIZE, FLUSHALL, SHUTDOWN, DEBUG, FUNCTION) and INFO.
	ErrSubSyntax        = "ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP."
	ErrInvalidClientID  = "ERR Invalid client ID"
	ErrClientIDRange    = "ERR client-id should be greater than 0"
	ErrMaxAgeRange      = "ERR maxage is not an integer or out of range" // CLIENT KILL MAXAGE (Redis 7.4)
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

	// Scripts and functions (scripting.go, functions.go).
	ErrNumKeysGreater     = "ERR Number of keys can't be greater than number of args"
	ErrNumKeysNegative    = "ERR Number of keys can't be negative"
	ErrBadNumKeys         = "ERR Bad number of keys provided"
	ErrFunctionNotFound   = "ERR Function not found"
	ErrScriptFlushArg     = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
	ErrFunctionLoadOption = "ERR Unknown option given: %s"
	ErrScriptDebugArg     = "ERR Use SCRIPT DEBUG YES/SYNC/NO"
	// HotKV's own: it has no Lua debugger.
	ErrScriptDebugUnsupported = "ERR SCRIPT DEBUG YES and SYNC are not supported: HotKV has no Lua debugger"
	// HotKV's own: a script's key that was not declared in KEYS (docs/decisions.md "Scripts").
	ErrScriptStrictKeys   = "ERR Script attempted to access a key not declared in KEYS (lua-strict-keys yes)"
	ErrScriptUndeclaredTx = "ERR Script inside MULTI attempted to access an undeclared key on a shard the transaction does not hold: declare it in KEYS"

	// MIGRATE (migrate.go), as Redis 7.0.15 words them.
	ErrMigrateKeysArg = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
	ErrMigrateConnect = "IOERR error or timeout connecting to the client"
	ErrMigrateWrite   = "IOERR error or timeout writing to target instance"
	ErrMigrateRead    = "IOERR error or timeout reading to target instance"

	// Persistence (persist*.go, dump.go), as Redis 7.0.15 words them.
	ErrBusyKey          = "BUSYKEY Target key name already exists."
	ErrDumpPayload      = "ERR DUMP payload version or checksum are wrong"
	ErrBadDataFormat    = "ERR Bad data format"
	ErrRestoreTTL       = "ERR Invalid TTL value, must be >= 0"
	ErrRestoreIdle      = "ERR Invalid IDLETIME value, must be >= 0"
	ErrRestoreFreq      = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	ErrLoading          = "LOADING Redis is loading the dataset in memory"
	ErrMisconfRDB       = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."
	ErrMisconfAOF       = "MISCONF Errors writing to the AOF file: "
	ErrSaveRunning      = "ERR Background save already in progress"
	ErrSaveFailed       = "ERR"
	ErrBGSaveBusy       = "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible."
	ErrAOFRewriteBusy   = "ERR Background append only file rewriting already in progress"
	ErrAOFRewriteFailed = "ERR Can't execute an AOF background rewriting. Please check the server logs for more information."
	ErrDebugReloadOpts  = "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
	ErrDebugReloadLoad  = "ERR Error trying to load the RDB dump, check server logs."
	// HotKV's own: a reload inside EXEC would wait for the tokens EXEC holds.
	ErrDebugReloadMulti = "ERR DEBUG RELOAD is not allowed inside MULTI in HotKV"

	// SLOWLOG, LATENCY, MONITOR (slowlog.go, latency_cmd.go, monitor.go).
	ErrSlowlogCount        = "ERR count should be greater than or equal to -1"
	ErrLatencyNoSamples    = "ERR No samples available for event '%s'"
	ErrMonitorDenyBlocking = "ERR MONITOR isn't allowed for DENY BLOCKING client"
	ErrMonitorKeyspace     = "ERR Replica can't interact with the keyspace"

	// DEBUG (debug.go, debug_digest.go).
	ErrDebugNotListpack     = "ERR Not a listpack encoded object."
	ErrDebugNotQuicklist    = "ERR Not a quicklist encoded object."
	ErrDebugNotHashtable    = "ERR The value stored at the specified key is not represented using an hash table"
	ErrDebugPushResp2       = "ERR RESP2 is not supported by this command"
	ErrDebugProtocolType    = "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"
	ErrDebugPackedThreshold = "ERR argument must be a memory value bigger than 1 and smaller than 4gb"
	// HotKV's: inside MULTI, EXEC holds only its commands' shards.
	ErrDebugDigestMulti = "ERR DEBUG DIGEST is not allowed inside MULTI in HotKV unless the transaction holds every shard"

	// Vector sets: Redis 8's modules/vector-sets/vset.c texts (vset*.go, vsim*.go).
	ErrVsetVectorSpec    = "ERR invalid vector specification"
	ErrVsetOptAfterElem  = "ERR invalid option after element"
	ErrVsetEF            = "ERR invalid EF"
	ErrVsetM             = "ERR invalid M"
	ErrVsetQuantMismatch = "ERR asked quantization mismatch with existing vector set"
	ErrVsetMMismatch     = "ERR asked M value mismatch with existing vector set"
	ErrVsetDimMismatch   = "ERR Vector dimension mismatch - got %d but set has %d"
	ErrVsetNoProjection  = "ERR cannot add projection to existing set without projection"
	ErrVsetProjMismatch  = "ERR projection dimension mismatch with existing set"
	ErrVsetProjInput     = "ERR Input dimension mismatch for projection - got %d but projection expects %d"
	ErrVsetEleNotFound   = "ERR element not found in set"
	ErrVsetVectorDim     = "ERR invalid vector dimension"
	ErrVsetVectorType    = "ERR vector type must be ELE, FP32 or VALUES"
	ErrVsetCount         = "ERR invalid COUNT"
	ErrVsetEpsilon       = "ERR invalid EPSILON"
	ErrVsetFilterEF      = "ERR invalid FILTER-EF"
	ErrVsetFilterSyntax  = "ERR syntax error in FILTER expression near: "
	ErrVsetVsimSyntax    = "ERR syntax error in VSIM command"
	ErrVsetNoKey         = "ERR key does not exist"
	ErrVsetInvalidOption = "ERR invalid option"
	ErrVsetCountNotInt   = "ERR COUNT value is not an integer"
	ErrVsetRangeBound    = "ERR invalid range specified"
	ErrVsetRangeCount    = "ERR invalid count"
	// HotKV's own, where Redis 8 stores what it is given: NaN/Inf components, a zero vector
	// under cosine (ds/vector refuses both).
	ErrVsetNaN  = "ERR invalid vector: NaN or infinite component"
	ErrVsetZero = "ERR invalid vector: zero vector under cosine"
	// VSIM.* (vsim_hotkv.go).
	ErrVsimExists   = "ERR index already exists"
	ErrVsimNoIndex  = "ERR no such index"
	ErrVsimDim      = "ERR invalid DIM"
	ErrVsimMetric   = "ERR invalid METRIC"
	ErrVsimQuant    = "ERR invalid QUANT"
	ErrVsimTTL      = "ERR invalid TTL"
	ErrVsimItems    = "ERR invalid ITEMS count"
	ErrVsimTags     = "ERR invalid TAGS count"
	ErrVsimK        = "ERR invalid K"
	ErrVsimMinSim   = "ERR invalid MINSIM"
	ErrVsimCapacity = "ERR invalid CAPACITY"
	// Agent memory, MEM.* (mem*.go).
	ErrMemNoKey        = "ERR no such agent memory (MEM.CREATE makes one)"
	ErrMemExists       = "ERR agent memory already exists"
	ErrMemWindow       = "ERR invalid WINDOW"
	ErrMemEncoding     = "ERR invalid ENCODING (cl100k_base or o200k_base)"
	ErrMemNotFound     = "ERR no such memory"
	ErrMemSuperseded   = "ERR memory is already superseded"
	ErrMemSelf         = "ERR a memory cannot supersede itself"
	ErrMemWindowLarge  = "ERR message exceeds the window's token budget"
	ErrMemVector       = "ERR invalid vector: NaN, infinite or zero"
	ErrMemVectorDim    = "ERR vector dimension mismatch - got %d but memory has %d"
	ErrMemCount        = "ERR invalid count"
	ErrMemTime         = "ERR invalid time"
	ErrMemType         = "ERR invalid TYPE (semantic, episodic or message)"
	ErrMemImportance   = "ERR invalid IMPORTANCE (a number from 0 to 1)"
	ErrMemTTL          = "ERR invalid TTL"
	ErrMemDedup        = "ERR invalid DEDUP (a cosine from -1 to 1)"
	ErrMemNeedText     = "ERR TEXT is required"
	ErrMemNeedVector   = "ERR VECTOR is required"
	ErrMemHalfLife     = "ERR invalid HALFLIFE"
	ErrMemWeights      = "ERR invalid WEIGHTS"
	ErrMemRequireUser  = "ERR this agent memory requires USER"
	ErrMemForgetFilter = "ERR FORGET needs a filter or ALL"
	ErrMemTokens       = "ERR invalid TOKENS"
	ErrMemTextLarge    = "ERR text too long to count tokens of: give TOKENS"
	ErrMemEmbedder     = "ERR MEM.* supports EMBEDDER lexical only: send VECTOR for other embeddings"
)
