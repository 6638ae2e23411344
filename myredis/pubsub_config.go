package myredis

import (
	"errors"
	"strconv"
	"strings"
)

// client-output-buffer-limit: one limit per client class, as Redis keeps them.
// The pubsub class is enforced on subscribers' outboxes (outbox.go), the normal
// class on each batch's replies (replybuf.go overOutputLimit); the replica
// limits are stored and reported: MyRedis has no replicas yet.

// Client classes of client-output-buffer-limit, in Redis's order.
const (
	obufNormal = iota
	obufReplica
	obufPubSub
)

var defaultObufLimits = [3]obufLimit{
	obufNormal:  {},
	obufReplica: {hard: 256 << 20, soft: 64 << 20, softSeconds: 60},
	obufPubSub:  {hard: 32 << 20, soft: 8 << 20, softSeconds: 60},
}

func (c *Config) initObuf() {
	if !c.obufInit {
		c.ObufLimits, c.obufInit = defaultObufLimits, true
	}
}

// setObufLimits parses "class hard soft seconds ..." as Redis's
// updateClientOutputBufferLimit: every group is checked before any is applied.
func (c *Config) setObufLimits(val string) error {
	c.initObuf()
	args := strings.Fields(val)
	if len(args)%4 != 0 {
		return errors.New(msgObufArgs)
	}
	next := c.ObufLimits
	for i := 0; i < len(args); i += 4 {
		class := obufClass(args[i])
		if class < 0 {
			return errors.New(msgObufClass)
		}
		hard, ok1 := parseMemoryRedis(args[i+1])
		soft, ok2 := parseMemoryRedis(args[i+2])
		secs, ok3 := strtoll(args[i+3])
		if !ok1 || !ok2 || !ok3 || secs < 0 {
			return errors.New(msgObufValues)
		}
		next[class] = obufLimit{hard: hard, soft: soft, softSeconds: secs}
	}
	c.ObufLimits = next
	return nil
}

// obufClass is a class name's index, -1 if unknown (any letter case, as Redis).
func obufClass(name string) int {
	switch strings.ToLower(name) {
	case "normal":
		return obufNormal
	case "slave", "replica":
		return obufReplica
	case "pubsub":
		return obufPubSub
	}
	return -1
}

// formatObufLimits is CONFIG GET client-output-buffer-limit.
func formatObufLimits(l [3]obufLimit) string {
	var b strings.Builder
	for i, name := range []string{"normal", "slave", "pubsub"} {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name + " " + strconv.FormatUint(l[i].hard, 10) + " " +
			strconv.FormatUint(l[i].soft, 10) + " " + strconv.FormatInt(l[i].softSeconds, 10))
	}
	return b.String()
}
