package myredis

// CLUSTER on a server that is not a cluster node: Redis 7.0 with cluster-enabled
// no still knows the command and every subcommand (so arity errors, unknown
// subcommands, ACL rules and a script's CLUSTER RESET are judged as usual), and
// the command itself answers that cluster support is disabled. MyRedis has no
// cluster mode: programs that want one point at Redis Cluster (queue/).

// msgClusterDisabled is clusterCommand's reply when cluster-enabled is no.
const msgClusterDisabled = "ERR This instance has cluster support disabled"

// commandsCluster registers CLUSTER and its subcommands with Redis 7.0.15's
// arities and the flags that matter here (RESET is refused inside scripts).
func commandsCluster() []*command {
	sub := func(arity, flags int) *command { return &command{arity: arity, flags: flags} }
	admin := flagAdmin | flagStale
	return []*command{
		{name: "cluster", arity: -2, fn: cmdCluster, subs: map[string]*command{
			"addslots": sub(-3, admin), "addslotsrange": sub(-4, admin), "bumpepoch": sub(2, admin),
			"count-failure-reports": sub(3, admin), "countkeysinslot": sub(3, flagStale),
			"delslots": sub(-3, admin), "delslotsrange": sub(-4, admin), "failover": sub(-2, admin),
			"flushslots": sub(2, admin), "forget": sub(3, admin), "getkeysinslot": sub(4, flagStale),
			"help": sub(2, flagStale), "info": sub(2, flagStale), "keyslot": sub(3, flagStale),
			"links": sub(2, flagStale), "meet": sub(-4, admin), "myid": sub(2, flagStale),
			"nodes": sub(2, flagStale), "replicas": sub(3, admin), "replicate": sub(3, admin),
			"reset": sub(-2, admin|flagNoScript), "saveconfig": sub(2, admin),
			"set-config-epoch": sub(3, admin), "setslot": sub(-4, admin), "shards": sub(2, flagStale),
			"slaves": sub(3, admin), "slots": sub(2, flagStale),
		}},
		// the cluster client's connection commands, refused the same way
		{name: "readonly", arity: 1, flags: flagStale, fn: cmdCluster},
		{name: "readwrite", arity: 1, flags: flagStale, fn: cmdCluster},
		{name: "asking", arity: 1, flags: flagStale, fn: cmdCluster},
	}
}

// cmdCluster runs on the executor goroutine; every subcommand, HELP included,
// gets the same answer, as in Redis.
func cmdCluster(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	x.err(msgClusterDisabled)
}
