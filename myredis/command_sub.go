package myredis

import (
	"bytes"
	"strconv"
	"strings"
)

// COMMAND INFO and COMMAND DOCS name a subcommand by its full name
// ("client|list"), as Redis's lookupCommandBySds. Redis's entries for a
// subcommand live inside its container's (commandinfo_redis.go): INFO's as an
// element of the container's last field, DOCS's under its "subcommands" key.

// lookupFullName finds a command, or a subcommand by its full name; nil when
// there is none (a name of three parts, or a subcommand of a plain command).
func (t commandTable) lookupFullName(name []byte) *command {
	base, sub, ok := bytes.Cut(name, []byte("|"))
	if !ok {
		return t.lookup(name)
	}
	c := t.lookup(base)
	if c == nil || c.subs == nil || bytes.IndexByte(sub, '|') >= 0 {
		return nil
	}
	return c.subcommand(sub)
}

// commandInfoEntry is Redis's COMMAND INFO entry of a command or subcommand,
// with its RESP3 aggregate types; ok is false when Redis has none.
func commandInfoEntry(name string) (raw, types string, ok bool) {
	if raw, ok := redisCommandInfo[name]; ok {
		return raw, redisCommandInfoTypes[name], true
	}
	parent, _, isSub := strings.Cut(name, "|")
	outer, ok := redisCommandInfo[parent]
	if !isSub || !ok {
		return "", "", false
	}
	_, i := respHeader(outer, 0)
	i = respSkip(outer, i, 9) // past the first nine fields
	n, i := respHeader(outer, i)
	for range n { // the subcommands' entries
		end := respSkip(outer, i, 1)
		if entryName(outer, i) == name {
			return outer[i:end], typesOf(outer, redisCommandInfoTypes[parent], i, end), true
		}
		i = end
	}
	return "", "", false
}

// commandDocsEntry is Redis's COMMAND DOCS entry of a command or subcommand.
func commandDocsEntry(name string) (raw, types string, ok bool) {
	if raw := redisCommandDocs[name]; raw != "" {
		return raw, redisCommandDocsTypes[name], true
	}
	parent, _, isSub := strings.Cut(name, "|")
	outer := redisCommandDocs[parent]
	if !isSub || outer == "" {
		return "", "", false
	}
	n, i := respHeader(outer, 0)
	for range n / 2 { // field name, value
		key := bulkAt(outer, i)
		i = respSkip(outer, i, 1)
		if key != "subcommands" {
			i = respSkip(outer, i, 1)
			continue
		}
		m, j := respHeader(outer, i)
		for range m / 2 { // subcommand name, its docs
			sub := bulkAt(outer, j)
			j = respSkip(outer, j, 1)
			end := respSkip(outer, j, 1)
			if sub == name {
				return outer[j:end], typesOf(outer, redisCommandDocsTypes[parent], j, end), true
			}
			j = end
		}
		break
	}
	return "", "", false
}

// typesOf cuts, out of the aggregate types of all of raw, those of raw[start:end].
func typesOf(raw, types string, start, end int) string {
	from := len(AggregateTypes(raw[:start]))
	n := len(AggregateTypes(raw[start:end]))
	if from >= len(types) {
		return ""
	}
	return types[from:min(from+n, len(types))]
}

// respHeader reads the count of the aggregate header at i and returns it with
// the offset after the header line. The entries are Redis's own, well formed.
func respHeader(raw string, i int) (n, next int) {
	eol := i + strings.Index(raw[i:], "\r\n")
	n, _ = strconv.Atoi(raw[i+1 : eol])
	return n, eol + 2
}

// bulkAt is the bulk string at i ("" if it is not one).
func bulkAt(raw string, i int) string {
	if raw[i] != '$' {
		return ""
	}
	n, start := respHeader(raw, i)
	return raw[start : start+n]
}

// entryName is the name (first element) of the COMMAND INFO entry at i.
func entryName(raw string, i int) string {
	_, i = respHeader(raw, i)
	return bulkAt(raw, i)
}

// respSkip returns the offset after count elements starting at i.
func respSkip(raw string, i, count int) int {
	for ; count > 0; count-- {
		n, next := respHeader(raw, i)
		switch raw[i] {
		case '$':
			next += max(n, 0) + 2
			if n < 0 {
				next -= 2
			}
		case '*', '~', '>':
			next = respSkip(raw, next, n)
		case '%':
			next = respSkip(raw, next, 2*n)
		}
		i = next
	}
	return i
}
