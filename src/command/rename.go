package command

import (
	"bytes"
	"errors"
	"strings"

	"github.com/hotkv/hotkv/ds/strs"
)

// rename-command in the config file (or on the command line), as Redis 7.0 applies it while
// loading: each line in order takes the command off the lookup table under its name and, unless
// the new name is empty, puts it back under the new one. The command keeps its own name
// everywhere else (errors, INFO commandstats, SLOWLOG), as Redis's cmd->fullname does.
//
// The renames live in the route stage: a renamed command's name is translated to its own before
// lookup, and a name no longer in the table is an unknown command. Scripts' redis.call and
// COMMAND see the renamed table too, as in Redis: COMMAND, COUNT, LIST and DOCS leave removed
// commands out and list renamed ones under their own names; INFO, DOCS and GETKEYS find a
// command by its new name only.

// renameTable is an engine's rename-command result; nil when there is none.
type renameTable struct {
	to     map[string][]byte // lower-case new name -> the command's own name
	hidden map[string]bool   // own names no longer in the table under themselves
	listed []*cmdDoc         // COMMAND's list: the commands still in the table, by own name
}

// Errors of a bad rename-command line, Redis's texts.
var (
	errRenameNoSuch = errors.New("No such command in rename-command")
	errRenameExists = errors.New("Target command name already exists")
)

// SetRenames applies rename-command lines (old, new; new "" removes old) in order, or fails
// with Redis's message for the first bad one. Call it before the engine serves.
func (e *Engine) SetRenames(pairs [][2]string) error {
	rt, err := buildRenames(pairs)
	if err != nil {
		return err
	}
	e.names = rt
	return nil
}

// CheckRenames reports the error of the last of pairs, applied after the others, as Redis
// reports it for that rename-command line while loading its config file.
func CheckRenames(pairs [][2]string) error {
	_, err := buildRenames(pairs)
	return err
}

func buildRenames(pairs [][2]string) (*renameTable, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	cur := make(map[string]*Spec, len(table))
	for name, s := range table {
		cur[name] = s
	}
	for _, p := range pairs {
		from, to := strings.ToLower(p[0]), strings.ToLower(p[1])
		s := cur[from]
		if s == nil {
			return nil, errRenameNoSuch
		}
		delete(cur, from)
		if to == "" {
			continue
		}
		if cur[to] != nil {
			return nil, errRenameExists
		}
		cur[to] = s
	}
	rt := &renameTable{to: map[string][]byte{}, hidden: map[string]bool{}}
	kept := map[*Spec]bool{}
	for name, s := range cur {
		kept[s] = true
		if name != s.Name {
			rt.to[name] = []byte(s.Name)
		}
	}
	for _, d := range commandIndex().top {
		if kept[d.spec] {
			rt.listed = append(rt.listed, d)
		}
	}
	for name, s := range table {
		if cur[name] != s {
			rt.hidden[name] = true
		}
	}
	return rt, nil
}

// own returns the command's own name for the name a client used, and false when that name is
// no longer a command.
func (rt *renameTable) own(name []byte) ([]byte, bool) {
	var buf [32]byte
	lower := strs.AppendLower(buf[:0], name)
	if own, ok := rt.to[string(lower)]; ok {
		return own, true
	}
	return name, !rt.hidden[string(lower)]
}

// renamed translates args[0] in place to the command's own name (args[0] then points at a
// static copy of the name, not into the read buffer, and must not be written), and reports false
// when the name is no longer a command.
func (rt *renameTable) renamed(args [][]byte) bool {
	own, ok := rt.own(args[0])
	args[0] = own
	return ok
}

// renamedAway stands for a name that is no longer a command: no command's name has a space.
var renamedAway = []byte("renamed away")

// renamedArgs is args as the command table knows them, for redis.call: args itself without
// renames (or when its name was not renamed), else a copy whose first element is the command's
// own name, or a name no command has when it was renamed away.
func (e *Engine) renamedArgs(args [][]byte) [][]byte {
	rt := e.names
	if rt == nil || len(args) == 0 {
		return args
	}
	own, ok := rt.own(args[0])
	switch {
	case !ok:
		own = renamedAway
	case len(own) == len(args[0]) && (len(own) == 0 || &own[0] == &args[0][0]):
		return args // not renamed: own is args[0] itself
	}
	return append([][]byte{own}, args[1:]...)
}

// listedCommands is COMMAND's list of top-level commands.
func (e *Engine) listedCommands() []*cmdDoc {
	if e.names == nil {
		return commandIndex().top
	}
	return e.names.listed
}

// findListed is findCommand by the name a client uses ("fetch", "cfg|get" after renames).
func (e *Engine) findListed(name []byte) *cmdDoc {
	rt := e.names
	if rt == nil {
		return findCommand(name)
	}
	head, tail, _ := bytes.Cut(name, []byte("|"))
	own, ok := rt.own(head)
	if !ok {
		return nil
	}
	if len(tail) > 0 || bytes.IndexByte(name, '|') >= 0 {
		own = append(append(append([]byte(nil), own...), '|'), tail...)
	}
	return findCommand(own)
}
