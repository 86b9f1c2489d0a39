package command

import (
	"net"
	"strings"
)

// IsLocalAddr is Redis 7.0's islocalClient for a client's "ip:port" address (Client.Addr): a unix
// socket, or a TCP peer whose address prints exactly as 127.0.0.1 or ::1. Other loopback addresses
// (127.0.0.2, ::ffff:127.0.0.1) are not local to Redis, which compares the strings, so they are
// not local here either. Protected mode, enable-debug-command local and enable-protected-configs
// local all decide by it.
func IsLocalAddr(addr string) bool {
	if strings.HasPrefix(addr, "/") || addr == "" { // a unix socket's path (or no peer address)
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return host == "127.0.0.1" || host == "::1"
}

// ProtectedDenies is Redis 7.0's protected-mode decision when a client connects
// (clientAcceptHandler): protected-mode is yes, the default user needs no password, and the
// client is not local. Redis 7.0 no longer looks at bind here (6.x did). The caller answers
// -DENIED and closes the connection.
func (e *Engine) ProtectedDenies(remoteAddr string) bool {
	return e.Settings().ProtectedMode && e.defaultUserNoPass() && !IsLocalAddr(remoteAddr)
}

// defaultUserNoPass reports whether the default user has nopass (Redis's protected-mode test):
// requirepass, ACL SETUSER default and ACL LOAD all decide it (acl.go).
func (e *Engine) defaultUserNoPass() bool { return e.acl.Default().User().NoPass() }
