package myredis

import (
	"sort"
	"strconv"
	"strings"
)

// What ACL needs to know of each command, read once from Redis 7.0.15's own
// COMMAND INFO entries (commandinfo_redis.go) when the command table is built:
// the ACL categories, the key specs (which arguments are keys, and whether the
// command reads or writes them) and the bit that stands for the command in a
// selector's bitmap.

// ACL categories in Redis's order (ACL CAT, GETUSER and the rule describer list
// them so).
var aclCategoryNames = []string{"keyspace", "read", "write", "set", "sortedset", "list",
	"hash", "string", "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast",
	"slow", "blocking", "dangerous", "connection", "transaction", "scripting"}

// aclCategory returns the bit of a category name (any letter case), 0 if unknown.
func aclCategory(name string) uint32 {
	for i, n := range aclCategoryNames {
		if strings.EqualFold(n, name) {
			return 1 << i
		}
	}
	return 0
}

// Key spec flags (Redis's CMD_KEY_*).
const (
	keyRO = 1 << iota
	keyRW
	keyOW
	keyRM
	keyAccess
	keyUpdate
	keyInsert
	keyDelete
	keyNotKey
	keyIncomplete
	keyVariableFlags
)

var keyFlagNames = map[string]int{"RO": keyRO, "RW": keyRW, "OW": keyOW, "RM": keyRM,
	"access": keyAccess, "update": keyUpdate, "insert": keyInsert, "delete": keyDelete,
	"not_key": keyNotKey, "incomplete": keyIncomplete, "variable_flags": keyVariableFlags}

// keySpec is one of Redis's key specs: where the search begins (an index, or
// after a keyword) and how the keys are found from there (a range, or a count).
type keySpec struct {
	flags int
	// begin_search: index (keyword == "") or keyword searched from startFrom
	index     int
	keyword   string
	startFrom int
	// find_keys: range (lastKey, keyStep, limit) or keynum (keyNumIdx, firstKey, keyStep)
	keynum    bool
	lastKey   int
	keyStep   int
	limit     int
	keyNumIdx int
	firstKey  int
	valid     bool // both parts were understood
}

// aclCmd is a command's ACL data.
type aclCmd struct {
	id    int    // bit in a selector's command bitmap
	cats  uint32 // ACL categories
	specs []keySpec
	// hasKeys: some spec names real keys, or the command finds keys itself
	hasKeys bool
	// bySpecs: the specs can be trusted (no variable flags); else keys come from
	// the command's own extractor
	bySpecs bool
	chans   chanSpec
}

// chanSpec says which arguments are pub/sub channels (Redis's commands_with_channels).
type chanSpec struct {
	start, count int // count -1: to the end
	flags        int
}

const (
	chanSubscribe = 1 << iota
	chanPublish
	chanPattern
	chanUnsubscribe
)

var channelCommands = map[string]chanSpec{
	"subscribe":    {1, -1, chanSubscribe},
	"ssubscribe":   {1, -1, chanSubscribe},
	"unsubscribe":  {1, -1, chanUnsubscribe},
	"sunsubscribe": {1, -1, chanUnsubscribe},
	"psubscribe":   {1, -1, chanPattern | chanSubscribe},
	"punsubscribe": {1, -1, chanPattern | chanUnsubscribe},
	"publish":      {1, 1, chanPublish},
	"spublish":     {1, 1, chanPublish},
}

// aclCommandList is every command and subcommand in the order of their ids:
// containers by name, each followed by its subcommands by name.
type aclCommandList []*command

// markACL gives every command of t its ACL data and returns them by id.
func markACL(t commandTable) aclCommandList {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	var list aclCommandList
	for _, n := range names {
		c := t[n]
		info, _ := parseRESPValue([]byte(redisCommandInfo[n]))
		arr, _ := info.([]any)
		c.acl = aclFromInfo(c, arr)
		c.acl.id = len(list)
		list = append(list, c)
		subNames := make([]string, 0, len(c.subs))
		for sn := range c.subs {
			subNames = append(subNames, sn)
		}
		sort.Strings(subNames)
		subInfo := map[string][]any{}
		if len(arr) >= 10 {
			subs, _ := arr[9].([]any)
			for _, s := range subs {
				if sa, ok := s.([]any); ok && len(sa) > 0 {
					name, _ := sa[0].(string)
					subInfo[name] = sa
				}
			}
		}
		for _, sn := range subNames {
			sc := c.subs[sn]
			sc.acl = aclFromInfo(sc, subInfo[sc.name])
			sc.acl.id = len(list)
			list = append(list, sc)
		}
	}
	return list
}

// aclFromInfo reads one COMMAND INFO entry (nil when Redis has none).
func aclFromInfo(c *command, info []any) aclCmd {
	a := aclCmd{chans: channelCommands[c.name]}
	if len(info) >= 9 {
		cats, _ := info[6].([]any)
		for _, v := range cats {
			if s, ok := v.(string); ok {
				a.cats |= aclCategory(strings.TrimPrefix(s, "@"))
			}
		}
		specs, _ := info[8].([]any)
		for _, v := range specs {
			if m, ok := v.([]any); ok {
				a.specs = append(a.specs, parseKeySpec(m))
			}
		}
	} else if c.firstKey > 0 || c.keysFn != nil || c.numKeysAt > 0 {
		// not a Redis command: its declared keys, read and written
		a.specs = nil
		a.hasKeys = true
		return a
	}
	a.bySpecs = true
	for _, sp := range a.specs {
		if sp.flags&keyNotKey == 0 {
			a.hasKeys = true
		}
		if sp.flags&keyVariableFlags != 0 {
			a.bySpecs = false
		}
	}
	if c.keysFn != nil || c.numKeysAt > 0 {
		a.hasKeys = true
	}
	return a
}

// parseKeySpec reads a key spec map (flags, begin_search, find_keys).
func parseKeySpec(m []any) keySpec {
	var ks keySpec
	okBS, okFK := false, false
	for i := 0; i+1 < len(m); i += 2 {
		name, _ := m[i].(string)
		switch name {
		case "flags":
			fl, _ := m[i+1].([]any)
			for _, f := range fl {
				if s, ok := f.(string); ok {
					ks.flags |= keyFlagNames[s]
				}
			}
		case "begin_search":
			typ, spec := specTypeAndBody(m[i+1])
			switch typ {
			case "index":
				ks.index, okBS = int(specInt(spec, "index")), true
			case "keyword":
				ks.keyword, _ = specValue(spec, "keyword").(string)
				ks.startFrom, okBS = int(specInt(spec, "startfrom")), true
			}
		case "find_keys":
			typ, spec := specTypeAndBody(m[i+1])
			switch typ {
			case "range":
				ks.lastKey, ks.keyStep, ks.limit = int(specInt(spec, "lastkey")), int(specInt(spec, "keystep")), int(specInt(spec, "limit"))
				okFK = true
			case "keynum":
				ks.keynum = true
				ks.keyNumIdx, ks.firstKey, ks.keyStep = int(specInt(spec, "keynumidx")), int(specInt(spec, "firstkey")), int(specInt(spec, "keystep"))
				okFK = true
			}
		}
	}
	ks.valid = okBS && okFK
	return ks
}

func specTypeAndBody(v any) (string, []any) {
	m, _ := v.([]any)
	typ, _ := specValue(m, "type").(string)
	body, _ := specValue(m, "spec").([]any)
	return typ, body
}

func specValue(m []any, name string) any {
	for i := 0; i+1 < len(m); i += 2 {
		if s, _ := m[i].(string); s == name {
			return m[i+1]
		}
	}
	return nil
}

func specInt(m []any, name string) int64 {
	n, _ := specValue(m, name).(int64)
	return n
}

// parseRESPValue reads one RESP2 value: simple and bulk strings as string,
// integers as int64, arrays as []any. It returns nil for anything else.
func parseRESPValue(b []byte) (any, []byte) {
	if len(b) < 3 {
		return nil, nil
	}
	end := indexCRLF(b)
	if end < 0 || end+2 > len(b) {
		return nil, nil
	}
	line, rest := string(b[1:end]), b[end+2:]
	switch b[0] {
	case '+':
		return line, rest
	case ':':
		n, _ := strconv.ParseInt(line, 10, 64)
		return n, rest
	case '$':
		n, err := strconv.Atoi(line)
		if err != nil || n < 0 || n+2 > len(rest) {
			return nil, nil
		}
		return string(rest[:n]), rest[n+2:]
	case '*':
		n, err := strconv.Atoi(line)
		if err != nil || n < 0 {
			return nil, nil
		}
		arr := make([]any, 0, n)
		for i := 0; i < n; i++ {
			var v any
			v, rest = parseRESPValue(rest)
			arr = append(arr, v)
		}
		return arr, rest
	}
	return nil, nil
}

// keyRef is a key argument's position and its spec's flags.
type keyRef struct {
	pos, flags int
}

// aclKeys finds the key arguments of args as Redis's getKeysFromCommandWithSpecs
// does for ACL: by the key specs when they are reliable and valid, else by the
// command's own extractor.
func (c *command) aclKeys(args [][]byte, dst []keyRef) []keyRef {
	if c.acl.bySpecs && len(c.acl.specs) > 0 {
		if refs, ok := keysBySpecs(c.acl.specs, c.arity, args, dst); ok {
			return refs
		}
	}
	return c.keysByExtractor(args, dst)
}

// keysByExtractor is the fallback: the command's own key positions, flagged with
// what its specs say (all of them together), SORT's STORE as written only.
func (c *command) keysByExtractor(args [][]byte, dst []keyRef) []keyRef {
	flags := 0
	for _, sp := range c.acl.specs {
		flags |= sp.flags
	}
	if flags == 0 {
		flags = keyRW | keyAccess | keyUpdate
	}
	switch c.name {
	case "set", "bitfield": // variable flags: Redis's setGetKeys, bitfieldGetKeys
		if len(args) < 2 {
			return dst
		}
		return append(dst, keyRef{1, variableKeyFlags(c.name, args)})
	}
	var keys [][]byte
	if spec, counted := keynumSpecs[c.name]; counted {
		keys = spec.keys(args)
	} else {
		keys = c.keys(args)
	}
	for i, k := range keys {
		pos := argIndex(args, k)
		if pos < 0 {
			continue
		}
		f := flags
		if (c.name == "sort" || c.name == "sort_ro") && i == 0 {
			f = keyRO | keyAccess
		} else if c.name == "sort" {
			f = keyOW | keyUpdate
		}
		dst = append(dst, keyRef{pos, f})
	}
	return dst
}

// variableKeyFlags: SET reads its key only with GET; BITFIELD writes it only
// with SET or INCRBY (or a syntax error, to be safe).
func variableKeyFlags(name string, args [][]byte) int {
	if name == "set" {
		for _, a := range args[min(3, len(args)):] { // short when redis.acl_check_cmd skips the arity check
			if eqFold(a, "get") {
				return keyRW | keyAccess | keyUpdate
			}
		}
		return keyOW | keyUpdate
	}
	for i := 2; i < len(args); i++ {
		rem := len(args) - i - 1
		switch {
		case eqFold(args[i], "get") && rem >= 2:
			i += 2
		case (eqFold(args[i], "set") || eqFold(args[i], "incrby")) && rem >= 3:
			return keyRW | keyAccess | keyUpdate
		case eqFold(args[i], "overflow") && rem >= 1:
			i++
		default:
			return keyRW | keyAccess | keyUpdate
		}
	}
	return keyRO | keyAccess
}

// argIndex finds the position of the argument k (the same slice) in args.
func argIndex(args [][]byte, k []byte) int {
	for i, a := range args {
		if len(a) == len(k) && (len(a) == 0 || &a[0] == &k[0]) {
			return i
		}
	}
	return -1
}

// keysBySpecs is Redis's getKeysUsingKeySpecs (false: a spec did not fit args).
func keysBySpecs(specs []keySpec, arity int, args [][]byte, dst []keyRef) ([]keyRef, bool) {
	argc := len(args)
	for _, sp := range specs {
		if sp.flags&keyNotKey != 0 {
			continue
		}
		if !sp.valid {
			return dst[:0], false
		}
		first := 0
		if sp.keyword == "" {
			first = sp.index
		} else {
			start, end := sp.startFrom, argc-1
			if sp.startFrom <= 0 {
				start, end = argc+sp.startFrom, 1
			}
			for i := start; i != end; {
				if i >= argc || i < 1 {
					break
				}
				if strings.EqualFold(string(args[i]), sp.keyword) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				continue
			}
		}
		var last, step int
		if !sp.keynum {
			step = sp.keyStep
			switch {
			case sp.lastKey >= 0:
				last = first + sp.lastKey
			case sp.limit == 0:
				last = argc + sp.lastKey
			default:
				last = first + ((argc-first)/sp.limit + sp.lastKey)
			}
		} else {
			step = sp.keyStep
			if sp.keyNumIdx >= argc || first+sp.keyNumIdx >= argc {
				return dst[:0], false
			}
			n, ok := parseRedisInt(args[first+sp.keyNumIdx])
			if !ok || n < 0 || n > int64(argc) {
				return dst[:0], false
			}
			first += sp.firstKey
			last = first + int(n) - 1
		}
		if last >= argc || last < first || first >= argc {
			if sp.keynum && last == first-1 {
				// numkeys 0: no keys from this spec, as Redis's count of 0
				continue
			}
			return dst[:0], false
		}
		if step <= 0 {
			step = 1
		}
		for i := first; i <= last; i += step {
			if i >= argc {
				if arity < 0 {
					continue
				}
				break
			}
			dst = append(dst, keyRef{i, sp.flags})
		}
		if sp.flags&keyIncomplete != 0 {
			return dst[:0], false
		}
	}
	return dst, true
}
