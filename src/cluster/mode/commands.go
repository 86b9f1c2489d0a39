package mode

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/src/cluster"
	"github.com/hotkv/hotkv/src/cluster/link"
	"github.com/hotkv/hotkv/src/cluster/wire"
)

// Cluster answers CLUSTER args (command.ClusterHooks).
func (m *Mode) Cluster(dst []byte, proto int, args [][]byte, keys cluster.KeyCounts) []byte {
	sub := strings.ToLower(string(args[1]))
	switch sub {
	case "keyslot":
		return resp.AppendInt(dst, int64(cluster.KeySlot(args[2])))
	case "links":
		return appendLinks(dst, proto, m.bus.Links())
	}
	var reply []byte
	var master *cluster.Node
	m.bus.Do(func(st *cluster.State, now int64) []cluster.Out {
		n := len(dst)
		if sub == "failover" {
			var outs []cluster.Out
			reply, outs = m.failover(dst, args[1], args[2:], st, now)
			m.changed(st)
			return outs
		}
		reply = m.run(dst, proto, sub, args[2:], st, now, keys)
		if sub == "replicate" && reply[n] == '+' {
			master = st.Myself.Master
		}
		st.Touch() // a command may change what Version does not track (importing marks, addresses)
		m.changed(st)
		return st.Announce(m.bus.Local(), m.rnd)
	})
	if master != nil && m.opts.OnReplicate != nil { // outside the bus lock: it starts a link
		m.opts.OnReplicate(master.IP, master.Port)
	}
	return reply
}

func errReply(dst []byte, err error) []byte { return resp.AppendError(dst, err.Error()) }

func (m *Mode) run(dst []byte, proto int, sub string, a [][]byte, st *cluster.State, now int64,
	keys cluster.KeyCounts) []byte {
	switch sub {
	case "info":
		return resp.AppendVerbatim(dst, proto, "txt", st.InfoText())
	case "nodes":
		return resp.AppendVerbatim(dst, proto, "txt", st.NodesText())
	case "myid":
		return resp.AppendBulkString(dst, st.Myself.Name)
	case "slots":
		return m.appendSlots(dst, proto, st)
	case "shards":
		return m.appendShards(dst, proto, st)
	case "addslots", "delslots":
		slots, err := parseSlots(a)
		if err == nil {
			err = m.slotsChange(st, sub == "addslots", slots, now)
		}
		return okOrErr(dst, err)
	case "addslotsrange", "delslotsrange":
		if len(a)%2 != 0 {
			return resp.AppendError(dst, fmt.Sprintf("ERR wrong number of arguments for 'cluster|%s' command", sub))
		}
		slots, err := parseRanges(a)
		if err == nil {
			err = m.slotsChange(st, sub == "addslotsrange", slots, now)
		}
		return okOrErr(dst, err)
	case "flushslots":
		st.FlushSlots(now)
		return resp.AppendSimple(dst, "OK")
	case "meet":
		return m.meet(dst, st, a, now)
	case "forget":
		return okOrErr(dst, st.Forget(string(a[0]), now))
	case "replicate":
		// The state change here; Cluster then starts the data replication (Options.OnReplicate).
		return okOrErr(dst, st.Replicate(string(a[0]), keys.Total == 0, now))
	case "set-config-epoch":
		e, err := strconv.ParseInt(string(a[0]), 10, 64)
		if err != nil {
			return resp.AppendError(dst, "ERR value is not an integer or out of range")
		}
		return okOrErr(dst, st.SetConfigEpoch(e))
	case "bumpepoch":
		return resp.AppendSimple(dst, st.BumpEpoch())
	case "count-failure-reports":
		n, err := st.CountFailureReports(string(a[0]), now)
		if err != nil {
			return errReply(dst, err)
		}
		return resp.AppendInt(dst, int64(n))
	case "setslot":
		return okOrErr(dst, m.setSlot(st, a, now, keys))
	case "saveconfig":
		if err := m.save(st, true); err != nil {
			return resp.AppendError(dst, "ERR error saving the cluster node config: "+err.Error())
		}
		return resp.AppendSimple(dst, "OK")
	case "reset":
		return okOrErr(dst, m.reset(st, a, now, keys))
	case "replicas", "slaves":
		n := st.Nodes[string(a[0])]
		if n == nil {
			return resp.AppendError(dst, "ERR Unknown node "+string(a[0]))
		}
		if !n.IsMaster() {
			return resp.AppendError(dst, "ERR The specified node is not a master")
		}
		dst = resp.AppendArrayLen(dst, len(n.Replicas))
		for _, r := range n.Replicas {
			dst = resp.AppendBulk(dst, st.AppendNodeLine(nil, r))
		}
		return dst
	}
	return resp.AppendError(dst, fmt.Sprintf("ERR unknown subcommand '%s'. Try CLUSTER HELP.", sub))
}

func okOrErr(dst []byte, err error) []byte {
	if err != nil {
		return errReply(dst, err)
	}
	return resp.AppendSimple(dst, "OK")
}

func parseSlot(b []byte) (int, error) {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 || n >= cluster.Slots {
		return 0, cluster.ErrInvalidSlot
	}
	return n, nil
}

func parseSlots(a [][]byte) ([]int, error) {
	out := make([]int, 0, len(a))
	for _, b := range a {
		n, err := parseSlot(b)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func parseRanges(a [][]byte) ([]int, error) {
	var out []int
	for i := 0; i+1 < len(a); i += 2 {
		lo, err := parseSlot(a[i])
		if err != nil {
			return nil, err
		}
		hi, err := parseSlot(a[i+1])
		if err != nil {
			return nil, err
		}
		if lo > hi {
			return nil, fmt.Errorf("ERR start slot number %d is greater than end slot number %d", lo, hi)
		}
		for s := lo; s <= hi; s++ {
			out = append(out, s)
		}
	}
	return out, nil
}

func (m *Mode) slotsChange(st *cluster.State, add bool, slots []int, now int64) error {
	if st.Myself.Master != nil {
		return errors.New("ERR Please use SETSLOT only with masters.")
	}
	if add {
		return st.AddSlots(slots, now)
	}
	return st.DelSlots(slots, now)
}

// CLUSTER MEET ip port [cport]
func (m *Mode) meet(dst []byte, st *cluster.State, a [][]byte, now int64) []byte {
	if len(a) > 3 {
		return resp.AppendError(dst, "ERR syntax error")
	}
	port, err := strconv.Atoi(string(a[1]))
	if err != nil || port < 0 || port > 65535 {
		return resp.AppendError(dst, "ERR Invalid TCP base port specified: "+string(a[1]))
	}
	cport := port + 10000
	if len(a) == 3 {
		if cport, err = strconv.Atoi(string(a[2])); err != nil || cport < 0 || cport > 65535 {
			return resp.AppendError(dst, "ERR Invalid TCP bus port specified: "+string(a[2]))
		}
	}
	ip := net.ParseIP(string(a[0]))
	if ip == nil || port == 0 || cport == 0 {
		return resp.AppendError(dst, fmt.Sprintf("ERR Invalid node address specified: %s:%s", a[0], a[1]))
	}
	st.Meet(ip.String(), port, cport, now)
	return resp.AppendSimple(dst, "OK")
}

// CLUSTER SETSLOT slot IMPORTING id | MIGRATING id | STABLE | NODE id
func (m *Mode) setSlot(st *cluster.State, a [][]byte, now int64, keys cluster.KeyCounts) error {
	if st.Myself.Master != nil {
		return errors.New("ERR Please use SETSLOT only with masters.")
	}
	slot, err := parseSlot(a[0])
	if err != nil {
		return err
	}
	action := strings.ToLower(string(a[1]))
	if (action == "stable" && len(a) != 2) || (action != "stable" && len(a) != 3) {
		return errors.New("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
	}
	var n *cluster.Node
	if len(a) == 3 {
		n = st.Nodes[string(a[2])]
	}
	switch action {
	case "migrating":
		if st.Owner[slot] != st.Myself {
			return fmt.Errorf("ERR I'm not the owner of hash slot %d", slot)
		}
		if n == nil {
			return fmt.Errorf("ERR I don't know about node %s", a[2])
		}
		if !n.IsMaster() {
			return errors.New("ERR Target node is not a master")
		}
		st.Migrating[slot] = n
	case "importing":
		if st.Owner[slot] == st.Myself {
			return fmt.Errorf("ERR I'm already the owner of hash slot %d", slot)
		}
		if n == nil {
			return fmt.Errorf("ERR I don't know about node %s", a[2])
		}
		if !n.IsMaster() {
			return errors.New("ERR Target node is not a master")
		}
		st.Importing[slot] = n
	case "stable":
		st.Migrating[slot], st.Importing[slot] = nil, nil
	case "node":
		if n == nil {
			return fmt.Errorf("ERR Unknown node %s", a[2])
		}
		if st.Owner[slot] == st.Myself && n != st.Myself && keys.Slot == slot && keys.InSlot != 0 {
			return fmt.Errorf("ERR Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot)
		}
		return st.SetSlotNode(slot, n.Name, now)
	default:
		return errors.New("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
	}
	st.UpdateState(now)
	return nil
}

// CLUSTER RESET [HARD|SOFT]: forget every other node and every slot; HARD also takes a new name and
// zeroes the epochs. A master holding keys is refused, as in Redis.
func (m *Mode) reset(st *cluster.State, a [][]byte, now int64, keys cluster.KeyCounts) error {
	hard := false
	if len(a) == 1 {
		switch strings.ToLower(string(a[0])) {
		case "hard":
			hard = true
		case "soft":
		default:
			return errors.New("ERR syntax error")
		}
	} else if len(a) > 1 {
		return errors.New("ERR syntax error")
	}
	if st.Myself.IsMaster() && keys.Total != 0 {
		return errors.New("ERR CLUSTER RESET can't be called with master nodes containing keys")
	}
	for slot := range cluster.Slots {
		st.Migrating[slot], st.Importing[slot] = nil, nil
	}
	st.FlushSlots(now)
	if st.Myself.Master != nil {
		st.Myself.Master = nil
		st.Myself.Flags = st.Myself.Flags&^wire.NodeSlave | wire.NodeMaster
	}
	for name, n := range st.Nodes {
		if n != st.Myself {
			st.Forget(name, now)
		}
	}
	clear(st.Forgotten)
	if hard {
		st.CurrentEpoch, st.LastVoteEpoch, st.Myself.ConfigEpoch = 0, 0, 0
		delete(st.Nodes, st.Myself.Name)
		st.Myself.Name = cluster.RandomName()
		st.Nodes[st.Myself.Name] = st.Myself
	}
	st.UpdateState(now)
	return nil
}

// appendSlots is CLUSTER SLOTS: per run of slots of one master, start, end, the master, then its
// replicas that are not failing; each node as ip, port, id and a map of extra fields (hostname).
func (m *Mode) appendSlots(dst []byte, proto int, st *cluster.State) []byte {
	type run struct {
		lo, hi int
		n      *cluster.Node
	}
	var runs []run
	for s := 0; s < cluster.Slots; s++ {
		o := st.Owner[s]
		if o == nil {
			continue
		}
		if len(runs) > 0 && runs[len(runs)-1].n == o && runs[len(runs)-1].hi == s-1 {
			runs[len(runs)-1].hi = s
			continue
		}
		runs = append(runs, run{s, s, o})
	}
	dst = resp.AppendArrayLen(dst, len(runs))
	for _, r := range runs {
		reps := slices.DeleteFunc(slices.Clone(r.n.Replicas), func(n *cluster.Node) bool { return n.Failed() })
		dst = resp.AppendArrayLen(dst, 3+len(reps))
		dst = resp.AppendInt(dst, int64(r.lo))
		dst = resp.AppendInt(dst, int64(r.hi))
		for _, n := range append([]*cluster.Node{r.n}, reps...) {
			dst = appendSlotsNode(dst, proto, n)
		}
	}
	return dst
}

func appendSlotsNode(dst []byte, proto int, n *cluster.Node) []byte {
	dst = resp.AppendArrayLen(dst, 4)
	dst = resp.AppendBulkString(dst, n.IP)
	dst = resp.AppendInt(dst, int64(n.Port))
	dst = resp.AppendBulkString(dst, n.Name)
	if n.Hostname == "" {
		return resp.AppendMapLen(dst, proto, 0)
	}
	dst = resp.AppendMapLen(dst, proto, 1)
	dst = resp.AppendBulkString(dst, "hostname")
	return resp.AppendBulkString(dst, n.Hostname)
}

// appendShards is CLUSTER SHARDS: one map per master (with or without slots) holding its slot
// ranges as a flat start/end list and its nodes, the master first, each with Redis 7.0's fields.
func (m *Mode) appendShards(dst []byte, proto int, st *cluster.State) []byte {
	var masters []*cluster.Node
	for _, n := range st.Nodes {
		if n.IsMaster() && n.Flags&wire.NodeHandshake == 0 {
			masters = append(masters, n)
		}
	}
	slices.SortFunc(masters, func(a, b *cluster.Node) int { return strings.Compare(a.Name, b.Name) })
	dst = resp.AppendArrayLen(dst, len(masters))
	for _, ms := range masters {
		dst = resp.AppendMapLen(dst, proto, 2)
		dst = resp.AppendBulkString(dst, "slots")
		var rs []int
		for s := 0; s < cluster.Slots; s++ {
			if !ms.HasSlot(s) {
				continue
			}
			e := s
			for e+1 < cluster.Slots && ms.HasSlot(e+1) {
				e++
			}
			rs = append(rs, s, e)
			s = e
		}
		dst = resp.AppendArrayLen(dst, len(rs))
		for _, v := range rs {
			dst = resp.AppendInt(dst, int64(v))
		}
		dst = resp.AppendBulkString(dst, "nodes")
		nodes := append([]*cluster.Node{ms}, ms.Replicas...)
		dst = resp.AppendArrayLen(dst, len(nodes))
		for _, n := range nodes {
			dst = m.appendShardNode(dst, proto, st, n)
		}
	}
	return dst
}

func (m *Mode) appendShardNode(dst []byte, proto int, st *cluster.State, n *cluster.Node) []byte {
	fields := 7
	if n.Hostname != "" {
		fields++
	}
	dst = resp.AppendMapLen(dst, proto, fields)
	dst = resp.AppendBulkString(dst, "id")
	dst = resp.AppendBulkString(dst, n.Name)
	dst = resp.AppendBulkString(dst, "port")
	dst = resp.AppendInt(dst, int64(n.Port))
	dst = resp.AppendBulkString(dst, "ip")
	dst = resp.AppendBulkString(dst, n.IP)
	dst = resp.AppendBulkString(dst, "endpoint")
	dst = resp.AppendBulkString(dst, n.IP)
	if n.Hostname != "" {
		dst = resp.AppendBulkString(dst, "hostname")
		dst = resp.AppendBulkString(dst, n.Hostname)
	}
	role, health := "master", "online"
	if !n.IsMaster() {
		role = "replica"
	}
	switch {
	case n.Failed():
		health = "failed"
	case !n.IsMaster() && n.ReplOffset == 0:
		health = "loading"
	}
	dst = resp.AppendBulkString(dst, "role")
	dst = resp.AppendBulkString(dst, role)
	dst = resp.AppendBulkString(dst, "replication-offset")
	dst = resp.AppendInt(dst, int64(n.ReplOffset))
	dst = resp.AppendBulkString(dst, "health")
	return resp.AppendBulkString(dst, health)
}

// CLUSTER FAILOVER [FORCE|TAKEOVER]
func (m *Mode) failover(dst, name []byte, a [][]byte, st *cluster.State, now int64) ([]byte, []cluster.Out) {
	var force, takeover bool
	if len(a) == 1 {
		switch strings.ToLower(string(a[0])) {
		case "force":
			force = true
		case "takeover":
			takeover = true
		default:
			return resp.AppendError(dst, "ERR syntax error"), nil
		}
	} else if len(a) > 1 {
		return resp.AppendError(dst, "ERR unknown subcommand or wrong number of arguments for '"+string(name)+"'. Try CLUSTER HELP."), nil
	}
	outs, err := st.ManualFailover(force, takeover, m.bus.Local(), now, m.rnd)
	if err != nil {
		return errReply(dst, err), nil
	}
	return resp.AppendSimple(dst, "OK"), outs
}

// appendLinks is CLUSTER LINKS: a map per link (a flat array in RESP2), with Redis's fields.
// The bus writes each message at once, without a send buffer, so both buffer sizes are 0 and
// the events are always "r".
func appendLinks(dst []byte, proto int, ls []link.Link) []byte {
	dst = resp.AppendArrayLen(dst, len(ls))
	for _, l := range ls {
		dst = resp.AppendMapLen(dst, proto, 6)
		dir := "from"
		if l.To {
			dir = "to"
		}
		dst = resp.AppendBulkString(resp.AppendBulkString(dst, "direction"), dir)
		dst = resp.AppendBulkString(resp.AppendBulkString(dst, "node"), l.Node)
		dst = resp.AppendInt(resp.AppendBulkString(dst, "create-time"), l.Created)
		dst = resp.AppendBulkString(resp.AppendBulkString(dst, "events"), "r")
		dst = resp.AppendInt(resp.AppendBulkString(dst, "send-buffer-allocated"), 0)
		dst = resp.AppendInt(resp.AppendBulkString(dst, "send-buffer-used"), 0)
	}
	return dst
}
