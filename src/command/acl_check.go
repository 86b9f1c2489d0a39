package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/src/acl"
)

// The permission check (Redis's ACLCheckAllUserCommandPerm), made in the route stage before any
// shard is touched, again for each queued command at EXEC, and for every redis.call of a
// script. An unrestricted user (the default one, "+@all ~* &*") costs one atomic load.

// aclResult is why a command is refused; the order is Redis's (ACL_DENIED_*), which picks the
// error to report when several selectors refuse for different reasons.
type aclResult uint8

const (
	aclOK aclResult = iota
	aclDeniedCmd
	aclDeniedKey
	aclDeniedAuth
	aclDeniedChannel
)

// ACL LOG contexts.
const (
	aclCtxTop   = "toplevel"
	aclCtxMulti = "multi"
	aclCtxLua   = "lua"
)

// aclCheck checks a command of user u; pos is the argument that failed (a key or a channel).
// keys is scratch for key positions.
func aclCheck(u *acl.User, spec *Spec, args [][]byte, keys []int) (res aclResult, pos int, scratch []int) {
	if u.Unrestricted() {
		return aclOK, 0, keys
	}
	t := aclTablesOnce()
	cmd := t.cmds[spec.id]
	res = aclDeniedCmd
	keysDone := false
	for _, s := range u.Selectors() {
		r, p := aclDeniedCmd, 0
		switch {
		case !s.AllowsCommand(cmd, args):
		default:
			if !s.AllKeys() && !keysDone {
				keys, keysDone = spec.keyIndexes(args, keys[:0]), true
			}
			if r, p = aclKeys(t, s, spec, args, keys); r == aclOK {
				r, p = aclChannels(t, s, spec, args)
			}
		}
		if r == aclOK {
			return aclOK, 0, keys
		}
		if r > res || (r == res && p > pos) {
			res, pos = r, p
		}
	}
	return res, pos, keys
}

func aclKeys(t *aclTables, s *acl.Selector, spec *Spec, args [][]byte, keys []int) (aclResult, int) {
	if s.AllKeys() || len(keys) == 0 || t.noKeys[spec.id] {
		return aclOK, 0
	}
	perm := t.keyPerm[spec.id]
	var flags [][]string
	if perm == aclVariable {
		if perm = variablePerm(spec.Name, args); perm == aclVariable {
			flags = commandIndex().byName[spec.Name].keyFlags(args, keys) // allocates; rare commands
		}
	}
	for i, k := range keys {
		p := perm
		if flags != nil {
			p = flagsPerm(flags[i])
		}
		if !s.AllowsKey(args[k], p) {
			return aclDeniedKey, k
		}
	}
	return aclOK, 0
}

func aclChannels(t *aclTables, s *acl.Selector, spec *Spec, args [][]byte) (aclResult, int) {
	kind := t.chans[spec.id]
	if kind == chanNone || s.AllChannels() {
		return aclOK, 0
	}
	last := len(args) - 1
	if kind == chanPublish {
		last = min(last, 1)
	}
	for i := 1; i <= last; i++ {
		if !s.AllowsChannel(args[i], kind == chanPattern) {
			return aclDeniedChannel, i
		}
	}
	return aclOK, 0
}

// aclRefusal checks cl's command and, when it is refused, logs it and returns the NOPERM error
// Redis's processCommand replies.
func (e *Engine) aclRefusal(cl *Client, spec *Spec, args [][]byte, context string) string {
	res, pos, keys := aclCheck(cl.aclEntry().User(), spec, args, cl.keyPos)
	cl.keyPos = keys
	if res == aclOK {
		return ""
	}
	e.aclLog(cl, res, context, spec, args, pos, "", false)
	return aclMessage(res, spec)
}

func aclMessage(res aclResult, spec *Spec) string {
	switch res {
	case aclDeniedKey:
		return ErrNoPermKey
	case aclDeniedChannel:
		return ErrNoPermChannel
	}
	return fmt.Sprintf(ErrNoPermCmd, spec.Name)
}

// aclLog adds an ACL LOG entry for cl (Redis's addACLLogEntry): its object is the command, the
// key or channel at pos, or AUTH's command name; user, when set, is the user that failed to log
// in. The client-info's cmd= is the command refused, or with outer (a script's call, a queued
// command at EXEC) the command the client sent (EVAL, EXEC), as Redis's c->cmd.
func (e *Engine) aclLog(cl *Client, res aclResult, context string, spec *Spec, args [][]byte, pos int, user string, outer bool) {
	en := acl.LogEntry{Context: context, Username: user}
	if user == "" {
		en.Username = cl.aclEntry().Name
	}
	switch res {
	case aclDeniedCmd:
		en.Reason, en.Object = "command", spec.Name
	case aclDeniedKey:
		en.Reason, en.Object = "key", string(args[pos])
	case aclDeniedChannel:
		en.Reason, en.Object = "channel", string(args[pos])
	case aclDeniedAuth:
		en.Reason, en.Object = "auth", string(args[0])
	}
	v := viewOf(cl, true, args)
	v.cmd = spec.Name
	if outer {
		v.cmd = *cl.lastCmd.Load()
	}
	en.ClientInfo = strings.TrimSuffix(string(appendClientLine(nil, &v, time.Now().UnixNano())), "\n")
	e.acl.Log.Add(en, time.Now().UnixMilli())
}

// authRequired reports whether an unauthenticated client must AUTH first (Redis's authRequired:
// the default user has a password or is off).
func (e *Engine) authRequired() bool {
	u := e.acl.Default().User()
	return !u.NoPass() || !u.Enabled()
}

// aclEntry returns the user the client is authenticated as (the default user until AUTH).
func (cl *Client) aclEntry() *acl.Entry { return cl.aclEnt.Load() }

// setACLUser makes the client act as user ent (AUTH, HELLO AUTH, RESET); owner only.
func (cl *Client) setACLUser(ent *acl.Entry) {
	cl.aclEnt.Store(ent)
	cl.SetUser(ent.Name)
}

// aclContext is the ACL LOG context of a command the client sends.
func aclContext(cl *Client) string {
	if cl.tx.on {
		return aclCtxMulti
	}
	return aclCtxTop
}

// aclExecRefusal re-checks a queued command when EXEC runs it, as Redis's execCommand does:
// the rules may have changed since it was queued. A refused command gets Redis's error in
// EXEC's reply and does not run; the others do.
func (e *Engine) aclExecRefusal(cl *Client, spec *Spec, args [][]byte) string {
	u := cl.aclEntry().User()
	if u.Unrestricted() {
		return ""
	}
	res, pos, _ := aclCheck(u, spec, args, nil)
	if res == aclOK {
		return ""
	}
	e.aclLog(cl, res, aclCtxMulti, spec, args, pos, "", true)
	reason := "no permission"
	switch res {
	case aclDeniedCmd:
		reason = "no permission to execute the command or subcommand"
	case aclDeniedKey:
		reason = "no permission to touch the specified keys"
	case aclDeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return fmt.Sprintf(ErrACLExecChanged, reason)
}

// aclAppendError appends an error reply (EXEC's entry for a refused queued command).
func aclAppendError(dst []byte, msg string) []byte { return resp.AppendError(dst, msg) }

// aclScriptRefusal checks a script's redis.call as Redis's scriptVerifyACL does: a refusal is
// logged in context lua and the script gets Redis's script error.
func (e *Engine) aclScriptRefusal(cl *Client, spec *Spec, args [][]byte) string {
	u := cl.aclEntry().User()
	if u.Unrestricted() {
		return ""
	}
	res, pos, _ := aclCheck(u, spec, args, nil)
	if res == aclOK {
		return ""
	}
	e.aclLog(cl, res, aclCtxLua, spec, args, pos, "", true)
	switch res {
	case aclDeniedKey:
		return ErrACLScriptKey
	case aclDeniedChannel:
		return ErrACLScriptChan
	}
	return ErrACLScriptCmd
}

// aclAllows is redis.acl_check_cmd: whether cl's user may run args (nothing is logged).
func (e *Engine) aclAllows(cl *Client, args [][]byte) bool {
	u := cl.aclEntry().User()
	if u.Unrestricted() {
		return true
	}
	spec := resolve(args)
	if spec == nil {
		return false
	}
	res, _, _ := aclCheck(u, spec, args, nil)
	return res == aclOK
}

// variablePerm is what SET's and BITFIELD's key needs, which depends on their arguments (as
// variableKeyFlags decides, without allocating): SET writes (OW update), SET ... GET also reads;
// a BITFIELD of GETs only reads. Other commands give aclVariable.
func variablePerm(name string, args [][]byte) acl.Perm {
	switch name {
	case "set":
		for _, a := range args[min(3, len(args)):] {
			if strs.EqualFold(a, "GET") {
				return acl.Read | acl.Write
			}
		}
		return acl.Write
	case "bitfield":
		if bitfieldReadOnly(args) {
			return acl.Read
		}
		return acl.Read | acl.Write
	}
	return aclVariable
}
