package command

// Wire errors of the sorted set commands (exact Redis 7.0 bytes, no leading '-').
const (
	ErrZIncrPairs     = "ERR INCR option supports a single increment-element pair"
	ErrZNaN           = "ERR resulting score is not a number (NaN)"
	ErrZMinMaxFloat   = "ERR min or max is not a float"
	ErrZMinMaxLex     = "ERR min or max not valid string range item"
	ErrZLimitRank     = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	ErrZWithscoresLex = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	ErrZNeedKey       = "ERR at least 1 input key is needed for '%s' command"
	ErrZWeightFloat   = "ERR weight value is not a float"
	ErrZLimitNegative = "ERR LIMIT can't be negative"
	ErrZNumkeys       = "ERR numkeys should be greater than 0"
	ErrZCount         = "ERR count should be greater than 0"
	ErrZPositive      = "ERR value is out of range, must be positive"
	ErrZOutOfRange    = "ERR value is out of range"
	ErrZRandRange     = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)
