package myredis

// COMMAND GETKEYS: the key arguments of a full command line, found as Redis 7.0
// finds them: first by the command's key specs (a fixed range, or a key count
// followed by that many keys), and when those fail by the command's own key
// extractor, which reads the count with C's atoi.

// keynumSpec describes a command whose keys follow a count: numIdx is the count's
// argument index, the keys start right after it, and store (when not 0) is the
// index of a destination key that comes before the count.
type keynumSpec struct {
	store, numIdx int
	// noMandatoryKeys: a command line without keys is valid (EVAL x 0), so
	// GETKEYS answers an empty array instead of an error.
	noMandatoryKeys bool
}

// keynumSpecs are the commands with a key count, by name.
var keynumSpecs = map[string]keynumSpec{
	"eval":        {numIdx: 2, noMandatoryKeys: true},
	"evalsha":     {numIdx: 2, noMandatoryKeys: true},
	"eval_ro":     {numIdx: 2, noMandatoryKeys: true},
	"evalsha_ro":  {numIdx: 2, noMandatoryKeys: true},
	"zunionstore": {store: 1, numIdx: 2},
	"zinterstore": {store: 1, numIdx: 2},
	"zdiffstore":  {store: 1, numIdx: 2},
	"zunion":      {numIdx: 1},
	"zinter":      {numIdx: 1},
	"zdiff":       {numIdx: 1},
	"zintercard":  {numIdx: 1},
	"zmpop":       {numIdx: 1},
	"bzmpop":      {numIdx: 2},
	"sintercard":  {numIdx: 1},
	"fcall":       {numIdx: 2, noMandatoryKeys: true},
	"fcall_ro":    {numIdx: 2, noMandatoryKeys: true},
}

// commandGetKeys answers COMMAND GETKEYS for the command line args. Runs on the executor.
func (x *Ctx) commandGetKeys(args [][]byte) {
	cmd := x.s.table.lookup(args[0])
	if cmd != nil && cmd.subs != nil && len(args) >= 2 {
		cmd = cmd.subcommand(args[1])
	}
	if cmd == nil {
		x.err(msgGetKeysInvalidCommand)
		return
	}
	spec, counted := keynumSpecs[cmd.name]
	switch {
	case cmd.firstKey == 0 && !counted && !cmd.acl.hasKeys:
		x.err(msgGetKeysNoKeys)
		return
	case !cmd.arityOK(len(args)):
		x.err(msgGetKeysArity)
		return
	}
	var keys [][]byte
	switch {
	case counted:
		keys = spec.keys(args)
	case cmd.firstKey == 0: // keys only its key specs name (MEMORY USAGE)
		for _, r := range cmd.aclKeys(args, nil) { // acl_meta.go
			keys = append(keys, args[r.pos])
		}
	default:
		keys = cmd.keys(args)
	}
	if len(keys) == 0 && !spec.noMandatoryKeys {
		x.err(msgGetKeysInvalidArgs)
		return
	}
	x.w.Array(len(keys))
	for _, k := range keys {
		x.w.Bulk(k)
	}
}

// keys finds the keys of args: by the key spec (store key first, the count read
// strictly), else as the command's extractor does (count read by atoi, store key
// last), else none.
func (k keynumSpec) keys(args [][]byte) [][]byte {
	if keys := k.bySpec(args); keys != nil {
		return keys
	}
	return k.byExtractor(args)
}

func (k keynumSpec) bySpec(args [][]byte) [][]byte {
	if k.numIdx >= len(args) {
		return nil
	}
	n, ok := parseRedisInt(args[k.numIdx])
	if !ok || n < 0 {
		return nil
	}
	first := k.numIdx + 1
	last := int64(first) + n - 1
	if last >= int64(len(args)) || last < int64(first) || first >= len(args) {
		return nil
	}
	var keys [][]byte
	if k.store != 0 {
		keys = append(keys, args[k.store])
	}
	return append(keys, args[first:last+1]...)
}

func (k keynumSpec) byExtractor(args [][]byte) [][]byte {
	if k.numIdx >= len(args) { // redis.acl_check_cmd does not check the arity
		return nil
	}
	first := k.numIdx + 1
	n := cAtoi(args[k.numIdx])
	if n < 1 || n > len(args)-first {
		return nil
	}
	keys := append([][]byte(nil), args[first:first+n]...)
	if k.store != 0 {
		keys = append(keys, args[k.store])
	}
	return keys
}

// cAtoi is C's atoi: leading white space, a sign, digits up to the first other
// byte; 0 when there are none. The value is cut to 32 bits as glibc's does.
func cAtoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var n int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n < 1<<62 {
			n = n*10 + int64(b[i]-'0')
		}
	}
	if neg {
		n = -n
	}
	return int(int32(n))
}

// commandGetKeysAndFlags answers COMMAND GETKEYSANDFLAGS: each key of the
// command line args with its key spec's flags, found as Redis's
// getKeysFromCommandWithSpecs finds them (the ACL checks use the same, see
// acl_meta.go). Runs on the executor.
func (x *Ctx) commandGetKeysAndFlags(args [][]byte) {
	cmd := x.s.table.lookup(args[0])
	if cmd != nil && cmd.subs != nil && len(args) >= 2 {
		cmd = cmd.subcommand(args[1])
	}
	switch {
	case cmd == nil:
		x.err(msgGetKeysInvalidCommand)
		return
	case !cmd.acl.hasKeys:
		x.err(msgGetKeysNoKeys)
		return
	case !cmd.arityOK(len(args)):
		x.err(msgGetKeysArity)
		return
	}
	refs := keysAndFlags(cmd, args)
	if len(refs) == 0 {
		if spec, counted := keynumSpecs[cmd.name]; counted && spec.noMandatoryKeys {
			x.w.Array(0)
		} else {
			x.err(msgGetKeysInvalidArgs)
		}
		return
	}
	x.w.Array(len(refs))
	for _, r := range refs {
		x.w.Array(2)
		x.w.Bulk(args[r.pos])
		names := keyFlagList(r.flags)
		x.w.Set(len(names))
		for _, n := range names {
			x.w.Simple(n)
		}
	}
}

// keyFlagOrder is the order Redis's addReplyFlagsForKeyArgs lists key flags in.
var keyFlagOrder = []string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete",
	"not_key", "incomplete", "variable_flags"}

// keyFlagList names the key flags set in flags, in Redis's order.
func keyFlagList(flags int) []string {
	var out []string
	for _, n := range keyFlagOrder {
		if flags&keyFlagNames[n] != 0 {
			out = append(out, n)
		}
	}
	return out
}

// keysAndFlags is Redis's getKeysFromCommandWithSpecs: the key specs when
// they are reliable and fit args, else the command's own extractor, whose
// keys carry flags only for the commands whose extractor sets them (SORT,
// SET, BITFIELD, MIGRATE); the others' are empty.
func keysAndFlags(cmd *command, args [][]byte) []keyRef {
	spec, counted := keynumSpecs[cmd.name]
	if counted {
		// a count that is not a positive integer fails Redis's spec (no keys is
		// last < first there), and its extractor, which flags nothing, runs
		if n, ok := parseRedisInt(args[min(spec.numIdx, len(args)-1)]); !ok || n <= 0 {
			var refs []keyRef
			for _, k := range spec.keys(args) {
				if pos := argIndex(args, k); pos >= 0 {
					refs = append(refs, keyRef{pos: pos})
				}
			}
			return refs
		}
	}
	if cmd.acl.bySpecs && len(cmd.acl.specs) > 0 {
		if refs, ok := keysBySpecs(cmd.acl.specs, cmd.arity, args, nil); ok {
			return refs
		}
	}
	refs := cmd.keysByExtractor(args, nil)
	switch cmd.name {
	case "sort", "sort_ro", "set", "bitfield", "migrate":
	default:
		for i := range refs {
			refs[i].flags = 0
		}
	}
	return refs
}
