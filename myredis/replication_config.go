package myredis

import (
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
)

// ReplConfig are the replication settings, by their redis.conf names.
type ReplConfig struct {
	// MasterHost and MasterPort are replicaof (slaveof): empty host, a master.
	MasterHost string
	MasterPort int
	MasterAuth string // masterauth
	MasterUser string // masteruser
	// BacklogSize is repl-backlog-size (0: the default, 1mb).
	BacklogSize int64
	// DisklessSync is repl-diskless-sync inverted (Redis's default is yes);
	// DisklessDelay is repl-diskless-sync-delay in seconds, -1 meaning the
	// default, 5 (set: Config.Set stores the value given).
	NoDisklessSync bool
	DisklessDelay  int
	delaySet       bool
	// PingPeriod is repl-ping-replica-period in seconds (0: the default, 10).
	PingPeriod int
	// Timeout is repl-timeout in seconds (0: the default, 60).
	Timeout int
	// ReadWrite is replica-read-only no.
	ReadWrite bool
	// Priority is replica-priority (-1 means 0: never promoted; 0 the default, 100).
	Priority int
	// MinReplicasToWrite and MinReplicasMaxLag are min-replicas-to-write and
	// min-replicas-max-lag (seconds; -1 means 0, 0 the default, 10): writes are
	// refused NOREPLICAS unless that many replicas acknowledged within the lag
	// (replication_guard.go).
	MinReplicasToWrite int
	MinReplicasMaxLag  int
	// NoServeStale is replica-serve-stale-data no: a replica whose link is
	// down answers MASTERDOWN to the commands not flagged stale.
	NoServeStale bool
}

func init() {
	for _, name := range []string{"repl-backlog-size", "repl-diskless-sync", "repl-diskless-sync-delay",
		"repl-ping-replica-period", "repl-timeout", "replica-read-only", "masterauth", "masteruser",
		"replica-priority", "min-replicas-to-write", "min-replicas-max-lag", "replica-serve-stale-data"} {
		runtimeSettable[name] = true
	}
	for alias, name := range replAliases {
		if runtimeSettable[name] {
			runtimeSettable[alias] = true
		}
	}
}

// replAliases are the old names Redis still takes for replication settings.
var replAliases = map[string]string{
	"slaveof": "replicaof", "slave-read-only": "replica-read-only",
	"repl-ping-slave-period": "repl-ping-replica-period", "slave-priority": "replica-priority",
	"min-slaves-to-write": "min-replicas-to-write", "min-slaves-max-lag": "min-replicas-max-lag",
	"slave-serve-stale-data": "replica-serve-stale-data",
}

func (r *ReplConfig) backlogSize() int64 {
	if r.BacklogSize == 0 {
		return 1 << 20
	}
	return r.BacklogSize
}

func (r *ReplConfig) disklessDelay() int {
	if !r.delaySet {
		return 5
	}
	return r.DisklessDelay
}

func (r *ReplConfig) pingPeriod() int {
	if r.PingPeriod == 0 {
		return 10
	}
	return r.PingPeriod
}

func (r *ReplConfig) timeout() int {
	if r.Timeout == 0 {
		return 60
	}
	return r.Timeout
}

func (r *ReplConfig) priority() int {
	switch {
	case r.Priority == 0:
		return 100
	case r.Priority < 0:
		return 0
	}
	return r.Priority
}

// set applies one replication setting; handled is false for other names.
func (r *ReplConfig) set(name, val string) (handled bool, err error) {
	if alias, ok := replAliases[name]; ok {
		name = alias
	}
	switch name {
	case "replicaof":
		words := strings.Fields(val)
		if len(words) != 2 {
			return true, errBadDirective
		}
		if strings.EqualFold(words[0], "no") && strings.EqualFold(words[1], "one") {
			r.MasterHost, r.MasterPort = "", 0
			return true, nil
		}
		port, perr := intConfig(words[1], 0, 65535)
		if perr != nil {
			return true, errors.New("Invalid master port")
		}
		r.MasterHost, r.MasterPort = words[0], port
	case "masterauth":
		r.MasterAuth = val
	case "masteruser":
		r.MasterUser = val
	case "repl-backlog-size":
		n, ok := parseMemoryRedis(val)
		if !ok {
			return true, errors.New("argument must be a memory value")
		}
		if n < 1 || n > math.MaxInt64 {
			return true, errors.New("argument must be between 1 and 9223372036854775807 inclusive")
		}
		r.BacklogSize = max(int64(n), 16<<10) // Redis's CONFIG_REPL_BACKLOG_MIN_SIZE
	case "repl-diskless-sync":
		var yes bool
		yes, err = parseYesNo(val)
		r.NoDisklessSync = err == nil && !yes
	case "repl-diskless-sync-delay":
		r.DisklessDelay, err = intConfig(val, 0, math.MaxInt32)
		r.delaySet = err == nil
	case "repl-ping-replica-period":
		r.PingPeriod, err = intConfig(val, 1, math.MaxInt32)
	case "repl-timeout":
		r.Timeout, err = intConfig(val, 1, math.MaxInt32)
	case "replica-read-only":
		var yes bool
		yes, err = parseYesNo(val)
		r.ReadWrite = err == nil && !yes
	case "replica-priority":
		r.Priority, err = intConfig(val, 0, math.MaxInt32)
		if err == nil && r.Priority == 0 {
			r.Priority = -1
		}
	case "min-replicas-to-write":
		r.MinReplicasToWrite, err = intConfig(val, 0, math.MaxInt32)
	case "min-replicas-max-lag":
		r.MinReplicasMaxLag, err = intConfig(val, 0, math.MaxInt32)
		if err == nil && r.MinReplicasMaxLag == 0 {
			r.MinReplicasMaxLag = -1
		}
	case "replica-serve-stale-data":
		var yes bool
		yes, err = parseYesNo(val)
		r.NoServeStale = err == nil && !yes
	default:
		return false, nil
	}
	return true, err
}

func (r *ReplConfig) minReplicasMaxLag() int {
	switch {
	case r.MinReplicasMaxLag == 0:
		return 10
	case r.MinReplicasMaxLag < 0:
		return 0
	}
	return r.MinReplicasMaxLag
}

// params adds CONFIG GET's replication entries.
func (r *ReplConfig) params(p map[string]func() string) {
	yesNo := map[bool]string{true: "yes", false: "no"}
	p["replicaof"] = func() string { // immutable: REPLICAOF changes it
		if r.MasterHost == "" {
			return ""
		}
		return r.MasterHost + " " + strconv.Itoa(r.MasterPort)
	}
	p["masterauth"] = func() string { return r.MasterAuth }
	p["masteruser"] = func() string { return r.MasterUser }
	p["repl-backlog-size"] = func() string { return strconv.FormatInt(r.backlogSize(), 10) }
	p["repl-diskless-sync"] = func() string { return yesNo[!r.NoDisklessSync] }
	p["repl-diskless-sync-delay"] = func() string { return strconv.Itoa(r.disklessDelay()) }
	p["repl-ping-replica-period"] = func() string { return strconv.Itoa(r.pingPeriod()) }
	p["repl-timeout"] = func() string { return strconv.Itoa(r.timeout()) }
	p["replica-read-only"] = func() string { return yesNo[!r.ReadWrite] }
	p["replica-priority"] = func() string { return strconv.Itoa(r.priority()) }
	p["min-replicas-to-write"] = func() string { return strconv.Itoa(r.MinReplicasToWrite) }
	p["min-replicas-max-lag"] = func() string { return strconv.Itoa(r.minReplicasMaxLag()) }
	p["replica-serve-stale-data"] = func() string { return yesNo[!r.NoServeStale] }
	for alias, name := range replAliases {
		if get := p[name]; get != nil {
			p[alias] = get
		}
	}
}

// masterAddr is host:port of the master.
func (r *ReplConfig) masterAddr() string {
	return net.JoinHostPort(r.MasterHost, strconv.Itoa(r.MasterPort))
}
