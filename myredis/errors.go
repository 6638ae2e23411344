package myredis

// Every error text a client can see, byte for byte as Redis 7.0 sends it
// (the leading "-" and trailing CRLF are added by the reply writer).
const (
	msgSyntax           = "ERR syntax error"
	msgNotInt           = "ERR value is not an integer or out of range"
	msgNotFloat         = "ERR value is not a valid float"
	msgIncrOverflow     = "ERR increment or decrement would overflow"
	msgIncrFloatNaN     = "ERR increment would produce NaN or Infinity"
	msgWrongType        = "WRONGTYPE Operation against a key holding the wrong kind of value"
	msgNoSuchKey        = "ERR no such key"
	msgInvalidDB        = "ERR DB index is out of range"
	msgInvalidExpireSet = "ERR invalid expire time in 'set' command"
	msgInvalidExpireFmt = "ERR invalid expire time in '%s' command"
	msgInvalidCursor    = "ERR invalid cursor"
	msgNoAuth           = "NOAUTH Authentication required."
	msgWrongPass        = "WRONGPASS invalid username-password pair or user is disabled."
	msgAuthNoPassword   = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	msgNoProto          = "NOPROTO unsupported protocol version"

	// CLIENT TRACKING and CACHING (tracking.go)
	msgTrackingOneRedirect      = "ERR A client can only redirect to a single other client"
	msgTrackingNoRedirect       = "ERR The client ID you want redirect to does not exist"
	msgTrackingPrefixNeedsBcast = "ERR PREFIX option requires BCAST mode to be enabled"
	msgTrackingSwitchBcast      = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	msgTrackingBcastOpt         = "ERR OPTIN and OPTOUT are not compatible with BCAST"
	msgTrackingOptinOptout      = "ERR You can't specify both OPTIN mode and OPTOUT mode"
	msgTrackingSwitchOpt        = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	msgTrackingCachingOff       = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
	msgTrackingCachingYes       = "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
	msgTrackingCachingNo        = "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
	msgHelloNoAuth              = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	msgHelloProtoNotInt         = "ERR Protocol version is not an integer or out of range"
	msgUnknownCommand           = "ERR unknown command '%s', with args beginning with: %s"
	msgUnknownSubcommand        = "ERR unknown subcommand '%s'. Try %s HELP."
	msgWrongArity               = "ERR wrong number of arguments for '%s' command"
	msgExpireOptions            = "ERR NX and XX, GT or LT options at the same time are not compatible"
	msgExpireGTLT               = "ERR GT and LT options at the same time are not compatible"
	msgUnsupportedOption        = "ERR Unsupported option %s"
	msgStringTooLong            = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	msgClientName               = "ERR Client names cannot contain spaces, newlines or special characters."
	msgProtoInvalidBulk         = "ERR Protocol error: invalid bulk length"
	msgProtoInvalidMulti        = "ERR Protocol error: invalid multibulk length"
	msgProtoBigInline           = "ERR Protocol error: too big inline request"
	msgProtoUnbalanced          = "ERR Protocol error: unbalanced quotes in request"
	msgProtoBigCount            = "ERR Protocol error: too big mbulk count string"
	msgProtoBigBulkCount        = "ERR Protocol error: too big bulk count string"
	msgProtoUnauthMulti         = "ERR Protocol error: unauthenticated multibulk length"
	msgProtoUnauthBulk          = "ERR Protocol error: unauthenticated bulk length"
	msgTimeoutNotFloat          = "ERR timeout is not a float or out of range"
	msgTimeoutNegative          = "ERR timeout is negative"
	msgNotAllowedMulti          = "ERR Command not allowed inside a transaction"

	// Sorted sets.
	msgZaddNXAndXX     = "ERR XX and NX options at the same time are not compatible"
	msgZaddGTLTNX      = "ERR GT, LT, and/or NX options at the same time are not compatible"
	msgZaddIncrPair    = "ERR INCR option supports a single increment-element pair"
	msgZaddNaN         = "ERR resulting score is not a number (NaN)"
	msgMinMaxNotFloat  = "ERR min or max is not a float"
	msgLexRange        = "ERR min or max not valid string range item"
	msgZrangeLimit     = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	msgZrangeLexScores = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	msgNotPositive     = "ERR value is out of range, must be positive"
	msgOutOfRange      = "ERR value is out of range"
	msgRandCountRange  = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	msgNumkeys         = "ERR at least 1 input key is needed for '%s' command"
	msgWeightNotFloat  = "ERR weight value is not a float"
	msgLimitNegative   = "ERR LIMIT can't be negative"

	// Sets.
	msgNumkeysPositive = "ERR numkeys should be greater than 0"

	// SORT.
	msgSortNotDouble = "ERR One or more scores can't be converted into double"

	// Hashes.
	msgHashNotInt   = "ERR hash value is not an integer"
	msgHashNotFloat = "ERR hash value is not a float"
	msgHashIncrNaN  = "ERR value is NaN or Infinity"

	// Lists.
	msgIndexOutOfRange    = "ERR index out of range"
	msgLposRankZero       = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	msgLposCountNegative  = "ERR COUNT can't be negative"
	msgLposMaxlenNegative = "ERR MAXLEN can't be negative"
	msgMpopNumkeys        = "ERR numkeys should be greater than 0" // the same text as the sets' msgNumkeysPositive
	msgMpopCountPositive  = "ERR count should be greater than 0"

	// Transactions.
	msgNestedMulti     = "ERR MULTI calls can not be nested"
	msgExecNoMulti     = "ERR EXEC without MULTI"
	msgDiscardNoMulti  = "ERR DISCARD without MULTI"
	msgWatchInMulti    = "ERR WATCH inside MULTI is not allowed"
	msgExecAbort       = "EXECABORT Transaction discarded because of previous errors."
	msgConfigSetUnknow = "ERR Unknown option or number of arguments for CONFIG SET - '%s'"

	// Scripting: replies to EVAL, EVALSHA and SCRIPT.
	msgNoScript               = "NOSCRIPT No matching script. Please use EVAL."
	msgNumKeysTooMany         = "ERR Number of keys can't be greater than number of args"
	msgNumKeysNegative        = "ERR Number of keys can't be negative"
	msgScriptCompile          = "ERR Error compiling script (new function): %s"
	msgShebangInvalid         = "ERR Invalid script shebang"
	msgShebangEngine          = "ERR Unexpected engine in script shebang: %s"
	msgShebangFlag            = "ERR Unexpected flag in script shebang: %s"
	msgShebangOption          = "ERR Unknown lua shebang option: %s"
	msgBusy                   = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	msgBusyFunction           = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	msgNotBusy                = "NOTBUSY No scripts in execution right now."
	msgUnkillable             = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	msgScriptFlushOption      = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
	msgScriptDebugOption      = "ERR Use SCRIPT DEBUG YES/SYNC/NO"
	msgScriptDebugUnsupported = "ERR SCRIPT DEBUG is not supported by MyRedis"

	// Scripting: errors raised inside a script. The script's reply is
	// "-ERR <text> script: <sha1>, on @user_script:<line>."; redis.pcall returns
	// {err="ERR <text>"}.
	msgLuaNoArgs       = "Please specify at least one argument for this redis lib call"
	msgLuaArgType      = "Lua redis lib command arguments must be strings or integers"
	msgLuaUnknownCmd   = "Unknown Redis command called from script"
	msgLuaArity        = "Wrong number of args calling Redis command from script"
	msgLuaNoScript     = "This Redis command is not allowed from script"
	msgLuaWriteRO      = "Write commands are not allowed from read-only scripts."
	msgLuaKilled       = "Script killed by user with SCRIPT KILL..."
	msgLuaNoGlobal     = "Script attempted to access nonexistent global variable '%s'"
	msgLuaReadonly     = "Attempt to modify a readonly table"
	msgLuaArgsWrong    = "wrong number or type of arguments"
	msgLuaSha1Args     = "wrong number of arguments"
	msgLuaLogArgs      = "redis.log() requires two arguments or more."
	msgLuaLogLevelType = "First argument must be a number (log level)."
	msgLuaLogLevel     = "Invalid debug level."
	msgLuaSetRespArgs  = "redis.setresp() requires one argument."
	msgLuaSetRespVer   = "RESP version must be 2 or 3."
	msgLuaSetReplArgs  = "redis.set_repl() requires two arguments."
	msgLuaSetReplFlags = "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."
	msgLuaACLInvalid   = "Invalid command passed to redis.acl_check_cmd()"

	// Persistence.
	msgRewriteRunning = "ERR Background append only file rewriting already in progress"
	msgRewriteFailed  = "ERR Can't execute an AOF background rewriting. Please check the server logs for more information."
	msgNoShutdown     = "ERR No shutdown in progress."
	msgShutdownFailed = "ERR Errors trying to SHUTDOWN. Check logs."

	// Streams.
	msgStreamBadID            = "ERR Invalid stream ID specified as stream command argument"
	msgStreamBadStart         = "ERR invalid start ID for the interval"
	msgStreamBadEnd           = "ERR invalid end ID for the interval"
	msgStreamTrimBoth         = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
	msgStreamMaxlenNeg        = "ERR The MAXLEN argument must be >= 0."
	msgStreamLimitNeg         = "ERR The LIMIT argument must be >= 0."
	msgStreamLimitNoTrim      = "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
	msgStreamXtrimNoTrim      = "ERR syntax error, XTRIM must be called with a trimming strategy"
	msgStreamLimitNoApprox    = "ERR syntax error, LIMIT cannot be used without the special ~ option"
	msgStreamXaddZero         = "ERR The ID specified in XADD must be greater than 0-0"
	msgStreamExhausted        = "ERR The stream has exhausted the last possible ID, unable to add more items"
	msgStreamXaddSmaller      = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	msgStreamTooLarge         = "ERR Elements are too large to be stored"
	msgStreamEntriesAddedNeg  = "ERR entries_added must be positive"
	msgStreamSetidBelowMaxDel = "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
	msgStreamSetidSmaller     = "ERR The ID specified in XSETID is smaller than the target stream top item"
	msgStreamSetidAddedSmall  = "ERR The entries_added specified in XSETID is smaller than the target stream length"
	msgXreadUnbalanced        = "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
	msgXreadGroupOption       = "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
	msgXreadNoackOption       = "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
	msgXreadgroupNoGroup      = "ERR Missing GROUP option for XREADGROUP"
	msgXreadgroupDollar       = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."
	msgXreadGreater           = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
	msgXreadgroupKeyGone      = "UNBLOCKED the stream key no longer exists"
	msgXreadgroupGroupGone    = "NOGROUP the consumer group this client was blocked on no longer exists"
	msgXgroupEntriesRead      = "ERR value for ENTRIESREAD must be positive or -1"
	msgXgroupNoKey            = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	msgXgroupBusy             = "BUSYGROUP Consumer Group name already exists"
	msgXclaimMinIdle          = "ERR Invalid min-idle-time argument for XCLAIM"
	msgXclaimIdle             = "ERR Invalid IDLE option argument for XCLAIM"
	msgXclaimTime             = "ERR Invalid TIME option argument for XCLAIM"
	msgXclaimRetry            = "ERR Invalid RETRYCOUNT option argument for XCLAIM"
	msgXautoclaimMinIdle      = "ERR Invalid min-idle-time argument for XAUTOCLAIM"
	msgXautoclaimCount        = "ERR COUNT must be > 0"
)

// A refused EXEC (arity, NOAUTH) and CONFIG SET's value errors.
const (
	msgExecAbortBecause = "EXECABORT Transaction discarded because of: "
	msgConfigSetFailed  = "ERR CONFIG SET failed (possibly related to argument '%s') - %s"
)

// DUMP and RESTORE (cmd_dump.go).
const (
	msgBusyKey         = "BUSYKEY Target key name already exists."
	msgInvalidTTL      = "ERR Invalid TTL value, must be >= 0"
	msgInvalidIdletime = "ERR Invalid IDLETIME value, must be >= 0"
	msgInvalidFreq     = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	msgDumpPayload     = "ERR DUMP payload version or checksum are wrong"
	msgBadDataFormat   = "ERR Bad data format"
	msgDumpUnsupported = "ERR this value type cannot be serialized yet"
)

// MIGRATE (cmd_migrate.go, migrate_conn.go).
const (
	msgMigrateKeysArg     = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
	msgMigrateConnect     = "IOERR error or timeout connecting to the client"
	msgMigrateIOWrite     = "IOERR error or timeout writing to target instance"
	msgMigrateIORead      = "IOERR error or timeout reading to target instance"
	msgMigrateTargetError = "ERR Target instance replied with error: "
)

// Bits, string ranges (SETRANGE, LCS) and HyperLogLog.
const (
	msgBitOffset        = "ERR bit offset is not an integer or out of range"
	msgBitValue         = "ERR bit is not an integer or out of range"
	msgBitArg           = "ERR The bit argument must be 1 or 0."
	msgBitopNot         = "ERR BITOP NOT must be called with a single source key."
	msgBitfieldType     = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	msgBitfieldOverflow = "ERR Invalid OVERFLOW type specified"
	msgBitfieldRO       = "ERR BITFIELD_RO only supports the GET subcommand"
	msgOffsetRange      = "ERR offset is out of range"
	msgLCSNotString     = "ERR The specified keys must contain string values"
	msgLCSLenAndIdx     = "ERR If you want both the length and indexes, please just use IDX."
	msgLCSTooLong       = "ERR String too long for LCS"
	msgLCSMemLimit      = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	msgLCSMemFailed     = "ERR Insufficient memory, failed allocating transient memory for LCS"
	msgHLLWrongType     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	msgHLLCorrupt       = "INVALIDOBJ Corrupted HLL object detected"
	msgPFDebugNoKey     = "ERR The specified key does not exist"
	msgPFDebugNotSparse = "ERR HLL encoding is not sparse"
	msgPFDebugUnknown   = "ERR Unknown PFDEBUG subcommand '%s'"
	msgPFDebugArity     = "ERR Wrong number of arguments for the '%s' subcommand"

	// SLOWLOG, LATENCY, MONITOR, DEBUG, CLIENT PAUSE (introspect.go and its files)
	msgSubcommandSyntax    = "ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP."
	msgSlowlogCount        = "ERR count should be greater than or equal to -1"
	msgDebugNotAllowed     = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
	msgModuleNotAllowed    = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
	msgModuleLoad          = "ERR Error loading the extension. Please check the server logs."
	msgModuleUnload        = "ERR Error unloading module: no such module with that name"
	msgLolwutTooBig        = "ERR LOLWUT drawing too large for MyRedis (at most %d characters)"
	msgMonitorDenyBlocking = "ERR MONITOR isn't allowed for DENY BLOCKING client"
	msgUnblockReason       = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
	msgUnblocked           = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	msgPauseMode           = "ERR CLIENT PAUSE mode must be WRITE or ALL"
	msgDebugReloadOptions  = "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
	msgDebugReloadFailed   = "ERR Error trying to load the RDB dump"
)

// COMMAND GETKEYS.
const (
	msgGetKeysInvalidCommand = "ERR Invalid command specified"
	msgGetKeysNoKeys         = "ERR The command has no key arguments"
	msgGetKeysArity          = "ERR Invalid number of arguments specified for command"
	msgGetKeysInvalidArgs    = "ERR Invalid arguments specified for command"
)

// Geo commands (cmd_geo.go).
const (
	msgGeoInvalidPair = "ERR invalid longitude,latitude pair %s,%s"
	msgGeoUnit        = "ERR unsupported unit provided. please use M, KM, FT, MI"
	msgGeoNeedRadius  = "ERR need numeric radius"
	msgGeoNeedWidth   = "ERR need numeric width"
	msgGeoNeedHeight  = "ERR need numeric height"
	msgGeoNegRadius   = "ERR radius cannot be negative"
	msgGeoNegBox      = "ERR height or width cannot be negative"
	msgGeoNoMember    = "ERR could not decode requested zset member"
	msgGeoCount       = "ERR COUNT must be > 0"
	msgGeoStoreWith   = "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
	msgGeoNeedFrom    = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s"
	msgGeoNeedBy      = "ERR exactly one of BYRADIUS and BYBOX can be specified for %s"
	msgGeoAnyCount    = "ERR the ANY argument requires COUNT argument"
)

// maxmemory (maxmemory.go).
const msgOOM = "OOM command not allowed when used memory > 'maxmemory'."

// Replication (replication*.go) and CLIENT KILL (client_kill.go).
const (
	msgReadOnlyReplica    = "READONLY You can't write against a read only replica."
	msgNoReplicas         = "NOREPLICAS Not enough good replicas to write."
	msgMasterDown         = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	msgLuaStale           = "Can not execute the command on a stale replica"
	msgNoSuchClient       = "ERR No such client"
	msgClientIDPositive   = "ERR client-id should be greater than 0"
	msgInvalidMasterPort  = "ERR Invalid master port"
	msgReplicaofByReplica = "ERR Command is not valid when client is a replica."
	msgWaitOnReplica      = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."
	msgSyncNoMasterLink   = "NOMASTERLINK Can't SYNC while not connected with my master"
	msgTimeoutNotInt      = "ERR timeout is not an integer or out of range"
)

// Pub/sub (cmd_pubsub.go) and client-output-buffer-limit.
const (
	msgPubSubContext    = "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
	msgPubSubSubcommand = "ERR unknown subcommand or wrong number of arguments for '%s'. Try PUBSUB HELP."
	msgObufArgs         = "Wrong number of arguments in buffer limit configuration."
	msgObufClass        = "Invalid client class specified in buffer limit configuration."
	msgObufValues       = "Error in hard, soft or soft_seconds setting in buffer limit configuration."
)
