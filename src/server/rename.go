package server

import (
	"github.com/hotkv/hotkv/src/command"
	"github.com/hotkv/hotkv/src/config"
)

// rename-command lines are checked against the command table while the config loads (so a bad
// one fails at its line, as in Redis) and applied to the engine in New.
func init() { config.CheckRenames = command.CheckRenames }
