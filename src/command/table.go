package command

import "github.com/hotkv/hotkv/ds/strs"

// families lists every command family; adding a family is one line here.
var families = [][]*Spec{
	connectionCommands,
	serverCommands,
	clientCommands,
	configCommands,
	commandCommands,
	infoCommands,
	keyCommands,
	expireCommands,
	stringCommands,
	bitmapCommands,
	hllCommands,
	hashCommands,
	listCommands,
	setCommands,
	zsetCommands,
	streamCommands,
	geoCommands,
	sortCommands,
	pubsubCommands,
	multiCommands,
	scriptingCommands,
	functionCommands,
	aclCommands, // ACL (acl.go)
	migrateCommands,
	memoryCommands,        // MEMORY (memory.go)
	introspectionCommands, // SLOWLOG, LATENCY, MONITOR
	tagCommands,
	ipsetCommands,
	vsetCommands, // vector sets: Redis 8's V* and HotKV's VSIM.* (vset.go)
	replCommands, // REPLCONF, PSYNC, SYNC, REPLICAOF, ROLE, WAIT (repl.go)
	llmcacheCommands,
	throttleCommands,
	memCommands, // agent memory: MEM.* (mem.go)
	budgetCommands,
	clusterCommands, // CLUSTER, ASKING, READONLY, READWRITE (cluster.go)
}

// table maps lower-case command names to their specs. It is built in init so that handlers may
// read it without an initialization cycle through families.
var table map[string]*Spec

func init() { table = buildTable() }

func buildTable() map[string]*Spec {
	t := map[string]*Spec{}
	for _, f := range families {
		for _, s := range f {
			if t[s.Name] != nil {
				panic("BUG: command registered twice: " + s.Name)
			}
			t[s.Name] = s
			s.id = numSpecs
			numSpecs++
			for _, sub := range s.Subs {
				sub.id = numSpecs
				numSpecs++
			}
		}
	}
	return t
}

// numSpecs counts commands and subcommands: the size of per-shard statistics.
var numSpecs int

// Commands returns every top-level command spec.
func Commands() map[string]*Spec { return table }

// lookup finds a command by name, ignoring case, without allocating for names up to 32 bytes.
func lookup(name []byte) *Spec { return lookupIn(table, name) }

func lookupIn(t map[string]*Spec, name []byte) *Spec {
	var buf [32]byte
	return t[string(strs.AppendLower(buf[:0], name))]
}
