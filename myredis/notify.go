package myredis

import (
	"errors"
	"strconv"
)

// Keyspace notifications (notify-keyspace-events): a command that changes a key
// calls x.notify(class, event, key) once per event, in Redis 7.0.15's order, and
// the hook publishes __keyspace@<db>__:<key> <event> and __keyevent@<db>__:<event>
// <key> to the subscribers (pubsub.go) when the class is enabled. With
// notifications off (the default) the hook is one branch and no allocation.
// Everything here runs on the executor goroutine.

// notifyClass is a set of event classes, Redis's NOTIFY_* bits.
type notifyClass uint16

const (
	notifyKeyspace notifyClass = 1 << 0  // K: __keyspace@<db>__:<key> channels
	notifyKeyevent notifyClass = 1 << 1  // E: __keyevent@<db>__:<event> channels
	notifyGeneric  notifyClass = 1 << 2  // g: del, expire, rename_from, ...
	notifyString   notifyClass = 1 << 3  // $
	notifyList     notifyClass = 1 << 4  // l
	notifySet      notifyClass = 1 << 5  // s
	notifyHash     notifyClass = 1 << 6  // h
	notifyZset     notifyClass = 1 << 7  // z
	notifyExpired  notifyClass = 1 << 8  // x: a key removed by its TTL
	notifyEvicted  notifyClass = 1 << 9  // e: a key removed by maxmemory
	notifyStream   notifyClass = 1 << 10 // t
	notifyKeyMiss  notifyClass = 1 << 11 // m: a read of a missing key (not in A)
	notifyModule   notifyClass = 1 << 13 // d: module events (none in MyRedis)
	notifyNew      notifyClass = 1 << 14 // n: a key created (not in A)

	// notifyAll is the class letter A.
	notifyAll = notifyGeneric | notifyString | notifyList | notifySet | notifyHash |
		notifyZset | notifyExpired | notifyEvicted | notifyStream | notifyModule
)

// msgNotifyClasses is CONFIG SET's error for an unknown class letter.
const msgNotifyClasses = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."

// notifyLetters maps each class letter to its bits, in the order CONFIG GET
// writes them (A stands alone; K, E and m come last).
var notifyLetters = []struct {
	letter byte
	class  notifyClass
}{
	{'g', notifyGeneric}, {'$', notifyString}, {'l', notifyList}, {'s', notifySet},
	{'h', notifyHash}, {'z', notifyZset}, {'x', notifyExpired}, {'e', notifyEvicted},
	{'t', notifyStream}, {'d', notifyModule}, {'n', notifyNew},
	{'K', notifyKeyspace}, {'E', notifyKeyevent}, {'m', notifyKeyMiss},
}

// parseNotifyClasses reads a notify-keyspace-events value as Redis's
// keyspaceEventsStringToFlags: any order, repeats allowed, "" for none.
func parseNotifyClasses(val string) (notifyClass, error) {
	var flags notifyClass
	for i := 0; i < len(val); i++ {
		if val[i] == 'A' {
			flags |= notifyAll
			continue
		}
		found := false
		for _, l := range notifyLetters {
			if l.letter == val[i] {
				flags |= l.class
				found = true
				break
			}
		}
		if !found {
			return 0, errors.New(msgNotifyClasses)
		}
	}
	return flags, nil
}

// formatNotifyClasses is CONFIG GET notify-keyspace-events, Redis's canonical
// string: "A" when every class of A is on (then, as Redis, n is not shown even
// if set), else each class letter in Redis's order; then K, E and m.
func formatNotifyClasses(flags notifyClass) string {
	var b []byte
	all := flags&notifyAll == notifyAll
	if all {
		b = append(b, 'A')
	}
	for _, l := range notifyLetters {
		perClass := l.class&(notifyKeyspace|notifyKeyevent|notifyKeyMiss) == 0
		if all && perClass {
			continue
		}
		if flags&l.class != 0 {
			b = append(b, l.letter)
		}
	}
	return string(b)
}

// notify reports event on key of x's database in class. Runs on the executor;
// one branch when the class is off.
func (x *Ctx) notify(class notifyClass, event, key string) {
	if x.s.cfg.NotifyEvents&class != 0 {
		x.s.notifyKeyspaceEvent(class, event, key, x.db.id)
	}
}

// notify is Ctx.notify for code that has the database, not a command context
// (expiry, key creation).
func (db *DB) notify(class notifyClass, event, key string) {
	if db.s.cfg.NotifyEvents&class != 0 {
		db.s.notifyKeyspaceEvent(class, event, key, db.id)
	}
}

// notifyKeyspaceEvent publishes one event on the channels notify-keyspace-events
// asks for (K, E). Runs on the executor.
func (s *Server) notifyKeyspaceEvent(class notifyClass, event, key string, dbid int) {
	flags := s.cfg.NotifyEvents
	if flags&class == 0 {
		return
	}
	var buf [64]byte
	if flags&notifyKeyspace != 0 {
		ch := append(buf[:0], "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(dbid), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		s.publish(subChannel, ch, []byte(event))
	}
	if flags&notifyKeyevent != 0 {
		ch := append(buf[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(dbid), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		s.publish(subChannel, ch, []byte(key))
	}
}
