package myredis

import (
	"fmt"
	"sort"
	"strings"
)

// commandsPubSub registers the pub/sub commands (pubsub.go has the registry).
func commandsPubSub() []*command {
	return []*command{
		{name: "subscribe", arity: -2, flags: flagNoScript, fn: cmdSubscribe(subChannel)},
		{name: "psubscribe", arity: -2, flags: flagNoScript, fn: cmdSubscribe(subPattern)},
		{name: "ssubscribe", arity: -2, flags: flagNoScript, fn: cmdSubscribe(subShard), firstKey: 1, lastKey: -1, step: 1},
		{name: "unsubscribe", arity: -1, flags: flagNoScript, fn: cmdUnsubscribe(subChannel)},
		{name: "punsubscribe", arity: -1, flags: flagNoScript, fn: cmdUnsubscribe(subPattern)},
		{name: "sunsubscribe", arity: -1, flags: flagNoScript, fn: cmdUnsubscribe(subShard), firstKey: 1, lastKey: -1, step: 1},
		{name: "publish", arity: 3, fn: cmdPublish(subChannel)},
		{name: "spublish", arity: 3, fn: cmdPublish(subShard), firstKey: 1, lastKey: 1, step: 1},
		{name: "pubsub", arity: -2, fn: cmdPubSub, subs: subcommands(map[string]int{
			"channels": -2, "numpat": 2, "numsub": -2, "shardchannels": -2, "shardnumsub": -2, "help": 2,
		})},
	}
}

// cmdSubscribe is SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE: one confirmation per name.
func cmdSubscribe(kind subKind) func(x *Ctx) {
	return func(x *Ctx) {
		x.c.pushing = x.c.replyOff || x.c.replySkip
		for _, name := range x.args[1:] {
			x.s.subscribe(x.c, kind, string(name), x.w)
		}
	}
}

// cmdUnsubscribe is UNSUBSCRIBE, PUNSUBSCRIBE and SUNSUBSCRIBE; without names,
// from everything of its kind.
func cmdUnsubscribe(kind subKind) func(x *Ctx) {
	return func(x *Ctx) {
		x.c.pushing = x.c.replyOff || x.c.replySkip
		if x.nargs() == 1 {
			x.s.unsubscribeAll(x.c, kind, x.w)
			return
		}
		for _, name := range x.args[1:] {
			x.s.unsubscribe(x.c, kind, string(name), x.w)
		}
	}
}

// cmdPublish is PUBLISH and SPUBLISH: the number of clients that received it.
func cmdPublish(kind subKind) func(x *Ctx) {
	return func(x *Ctx) {
		x.w.Int(int64(x.s.publish(kind, x.args[1], x.args[2])))
		x.propagateToReplicas()
	}
}

// pubsubHelp is PUBSUB HELP's text, Redis's.
var pubsubHelp = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Prints this help.",
}

func cmdPubSub(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	switch sub := strings.ToLower(x.arg(1)); sub {
	case "help":
		x.help(pubsubHelp)
	case "channels", "shardchannels":
		if x.nargs() > 3 {
			x.err(errPubSubSubcommand(x.arg(1)))
			return
		}
		kind := subChannel
		if sub == "shardchannels" {
			kind = subShard
		}
		pattern := "*"
		if x.nargs() == 3 {
			pattern = x.arg(2)
		}
		x.w.BulkStrings(x.s.activeChannels(kind, pattern))
	case "numpat":
		x.w.Int(int64(x.s.pubsub.count(subPattern)))
	case "numsub", "shardnumsub":
		kind := subChannel
		if sub == "shardnumsub" {
			kind = subShard
		}
		x.w.Array(2 * (x.nargs() - 2))
		for _, ch := range x.args[2:] {
			x.w.Bulk(ch)
			n := 0
			if set := x.s.pubsub.subscribers(kind, string(ch), false); set != nil {
				n = set.len()
			}
			x.w.Int(int64(n))
		}
	}
}

// activeChannels lists the channels of kind with subscribers matching pattern
// (sorted: Redis's order is its hash table's, which no client can rely on).
func (s *Server) activeChannels(kind subKind, pattern string) []string {
	var out []string
	for name := range s.pubsub.subs[kind] {
		if pattern == "*" || globMatch(pattern, name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// pubsubPong is PING's reply in RESP2 subscribed mode: [pong, message or ""].
func pubsubPong(x *Ctx) {
	x.w.Array(2)
	x.w.BulkString("pong")
	if x.nargs() == 2 {
		x.w.Bulk(x.args[1])
	} else {
		x.w.BulkString("")
	}
}

// errPubSubSubcommand is Redis's addReplySubcommandSyntaxError for PUBSUB.
func errPubSubSubcommand(sub string) string {
	sub = cstring([]byte(sub))
	if len(sub) > 128 {
		sub = sub[:128]
	}
	return fmt.Sprintf(msgPubSubSubcommand, sub)
}
