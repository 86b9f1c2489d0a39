package command

// SAVE, BGSAVE [SCHEDULE], BGREWRITEAOF and DEBUG RELOAD: the replies of Redis 7.0.15's
// saveCommand, bgsaveCommand, bgrewriteaofCommand and debugCommand, over Hooks that src/server
// fills (files, save rules, the AOF). LASTSAVE and SHUTDOWN are in server.go.

import (
	"errors"

	"github.com/hotkv/hotkv/ds/strs"
)

// ReplyError is an error a persistence hook wants replied as it is (without the "-").
type ReplyError string

func (r ReplyError) Error() string { return string(r) }

// ErrChildActive is what BGSave returns when another background job (an AOF rewrite) runs and
// SCHEDULE was not given; BGRewriteAOF returns ErrSnapshotRunning-like refusals as ReplyError.
var ErrChildActive = errors.New("another background job is active")

// ErrAOFRewriteRunning is BGRewriteAOF's refusal while a rewrite runs.
var ErrAOFRewriteRunning = errors.New("AOF rewrite already in progress")

// hookReply replies a hook's error: a ReplyError as it is, a known refusal as Redis words it,
// anything else as fallback.
func hookReply(c *Ctx, err error, fallback string) {
	var re ReplyError
	switch {
	case errors.As(err, &re):
		c.Err(string(re))
	case errors.Is(err, ErrSnapshotRunning):
		c.Err(ErrSaveRunning)
	case errors.Is(err, ErrChildActive):
		c.Err(ErrBGSaveBusy)
	case errors.Is(err, ErrAOFRewriteRunning):
		c.Err(ErrAOFRewriteBusy)
	default:
		c.Err(fallback)
	}
}

// SAVE
func saveCmd(c *Ctx) {
	f := c.E.Hooks.Save
	if f == nil {
		c.Err(ErrSaveFailed)
		return
	}
	if err := f(); err != nil {
		hookReply(c, err, ErrSaveFailed)
		return
	}
	c.OK()
}

// BGSAVE [SCHEDULE]
func bgsaveCmd(c *Ctx) {
	schedule := false
	if len(c.Args) > 1 {
		if len(c.Args) != 2 || !strs.EqualFold(c.Args[1], "SCHEDULE") {
			c.Err(ErrSyntax)
			return
		}
		schedule = true
	}
	f := c.E.Hooks.BGSave
	if f == nil {
		c.Err(ErrSaveFailed)
		return
	}
	// Inside EXEC the save can start only once EXEC lets its tokens go: Redis (server.in_exec)
	// answers "scheduled" there too.
	scheduled, err := f(schedule || c.tx != nil)
	switch {
	case err != nil:
		hookReply(c, err, ErrSaveFailed)
	case scheduled || c.tx != nil:
		c.Simple("Background saving scheduled")
	default:
		c.Simple("Background saving started")
	}
}

// BGREWRITEAOF
func bgrewriteaofCmd(c *Ctx) {
	f := c.E.Hooks.BGRewriteAOF
	if f == nil {
		c.Err(ErrAOFRewriteFailed)
		return
	}
	scheduled, err := f()
	switch {
	case err != nil:
		hookReply(c, err, ErrAOFRewriteFailed)
	case scheduled || c.tx != nil: // inside EXEC, as BGSAVE
		c.Simple("Background append only file rewriting scheduled")
	default:
		c.Simple("Background append only file rewriting started")
	}
}

// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save (unless NOSAVE), empty the data (unless NOFLUSH),
// load the file back (MERGE: its keys replace those present). A failed save replies "ERR", a
// failed load Redis's "Error trying to load" text, unless the hook gives a ReplyError.
func debugReload(c *Ctx) {
	var merge, noflush, nosave bool
	for _, a := range c.Args[2:] {
		switch {
		case strs.EqualFold(a, "MERGE"):
			merge = true
		case strs.EqualFold(a, "NOFLUSH"):
			noflush = true
		case strs.EqualFold(a, "NOSAVE"):
			nosave = true
		default:
			c.Err(ErrDebugReloadOpts)
			return
		}
	}
	f := c.E.Hooks.DebugReload
	if c.tx != nil { // EXEC holds the tokens the save and the load need
		c.Err(ErrDebugReloadMulti)
		return
	}
	if f == nil {
		c.Err(ErrDebugReloadLoad)
		return
	}
	if err := f(merge, noflush, nosave); err != nil {
		hookReply(c, err, ErrDebugReloadLoad)
		return
	}
	c.OK()
}
