package server

import (
	"errors"
	"time"

	"github.com/hotkv/hotkv/net/transport"
	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/command"
)

// handler connects the transport to the pipeline: one pipeline.Conn and one command.Client per
// connection.
type handler struct{ s *Server }

type connState struct {
	pc     *pipeline.Conn
	client *command.Client
}

const (
	errMaxClients = "-ERR max number of clients reached\r\n"
	errDenied     = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"
)

type refused string

func (r refused) Error() string { return string(r) }

func (h *handler) Open(c transport.Conn) error {
	e := h.s.Engine
	st := e.Settings()
	if e.ProtectedDenies(c.RemoteAddr().String()) {
		c.Write([]byte(errDenied))
		return refused("protected mode")
	}
	if e.ClientCount() >= st.MaxClients {
		e.RejectConnection()
		c.Write([]byte(errMaxClients))
		return refused("max clients")
	}
	cl := e.NewClient(c.RemoteAddr().String(), c.LocalAddr().String(), func() { c.Close() })
	cl.SetFD(c.Fd())
	cl.Alive = c.IsActive
	cl.Wake = c.Wake
	cl.SetIdle = func(d time.Duration) { c.SetIdleTimeout(d) }
	if p, ok := c.(interface{ Pending() (in, out int64) }); ok {
		cl.SetPending(p.Pending)
	}
	c.SetState(&connState{pc: pipeline.NewConn(h.s.env, c, cl), client: cl})
	if t := h.s.cfg.Int("timeout"); t > 0 {
		c.SetIdleTimeout(time.Duration(t) * time.Second)
	}
	return nil
}

func (h *handler) Serve(c transport.Conn) error {
	st, ok := c.State().(*connState)
	if !ok {
		return refused("no state")
	}
	err := st.pc.Serve()
	if errors.Is(err, pipeline.ErrWouldBlock) || errors.Is(err, transport.ErrOffload) {
		return transport.ErrOffload // the transport serves the conn again where it may block
	}
	if err != nil && !errors.Is(err, pipeline.ErrClose) {
		h.s.log.Debug("closing client", "id", st.client.ID, "addr", st.client.Addr, "reason", err.Error())
	}
	return err
}

func (h *handler) Closed(c transport.Conn) {
	if st, ok := c.State().(*connState); ok {
		h.s.Engine.RemoveClient(st.client)
	}
}

// KeepIdle is transport.IdleKeeper: as Redis's clientsCronHandleTimeout, the idle timeout
// spares pub/sub subscribers and clients blocked in a command.
func (h *handler) KeepIdle(c transport.Conn) bool {
	st, ok := c.State().(*connState)
	return ok && st.client.TimeoutExempt()
}
