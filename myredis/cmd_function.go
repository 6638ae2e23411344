package myredis

import (
	"strings"
)

// commandsFunctions registers FUNCTION and FCALL (functions.go has the engine).
func commandsFunctions() []*command {
	sub := func(arity, flags int) *command { return &command{arity: arity, flags: flags} }
	return []*command{
		{name: "function", arity: -2, flags: flagNoScript, fn: cmdFunction, subs: map[string]*command{
			"load": sub(-3, flagWrite), "delete": sub(3, flagWrite), "flush": sub(-2, flagWrite),
			"restore": sub(-3, flagWrite), "list": sub(-2, 0), "dump": sub(2, 0), "stats": sub(2, 0),
			"kill": sub(2, 0), "help": sub(2, 0),
		}},
		{name: "fcall", arity: -3, flags: flagNoScript, fn: fcallCmd(false), numKeysAt: 2},
		{name: "fcall_ro", arity: -3, flags: flagNoScript | flagReadonly, fn: fcallCmd(true), numKeysAt: 2},
	}
}

// errSubcommandSyntax is Redis's addReplySubcommandSyntaxError.
func errSubcommandSyntax(args [][]byte) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + cstring(args[1]) + "'. Try " +
		strings.ToUpper(cstring(args[0])) + " HELP."
}

func cmdFunction(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	f := x.s.functionLibs()
	switch strings.ToLower(x.arg(1)) {
	case "load":
		x.functionLoad(f)
	case "delete":
		lib := f.libs[x.arg(2)]
		if lib == nil {
			x.err("ERR Library not found")
			return
		}
		f.remove(lib)
		x.dirty(1)
		x.ok()
	case "flush":
		if x.nargs() > 3 {
			x.err(errSubcommandSyntax(x.args))
			return
		}
		if x.nargs() == 3 && !x.argIs(2, "sync") && !x.argIs(2, "async") {
			x.err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
			return
		}
		f.flush()
		x.dirty(1)
		x.ok()
	case "restore":
		x.functionRestore(f)
	case "list":
		x.functionList(f)
	case "dump":
		x.w.Bulk(f.dump())
	case "stats":
		x.s.writeFunctionStats(x.w)
	case "kill":
		// Run here, on the executor, no script is running: while one runs, a
		// connection goroutine answers FUNCTION KILL itself (see answerBusy).
		if msg := x.s.scriptGuard.kill(true); msg != "" {
			x.err(msg)
			return
		}
		x.ok()
	case "help":
		x.help(functionHelp)
	}
}

// functionLoad is FUNCTION LOAD [REPLACE] code.
func (x *Ctx) functionLoad(f *functionLibs) {
	replace := false
	i := 2
	for ; i < x.nargs()-1; i++ {
		if !x.argIs(i, "replace") {
			x.err("ERR Unknown option given: " + x.arg(i))
			return
		}
		replace = true
	}
	timeout := functionLoadTimeout
	if x.s.loading {
		timeout = 0 // replaying the AOF: what loaded once must load again
	}
	lib, errMsg := f.compileLibraryUnless(x.arg(i), timeout, func(name string) string {
		if !replace && f.libs[name] != nil {
			return "ERR Library '" + name + "' already exists"
		}
		return ""
	})
	if errMsg == "" {
		errMsg = f.add(lib, replace)
	}
	if errMsg != "" {
		x.err(errMsg)
		return
	}
	x.dirty(1)
	x.w.BulkString(lib.name)
}

// functionRestore is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func (x *Ctx) functionRestore(f *functionLibs) {
	if x.nargs() > 4 {
		x.err(errSubcommandSyntax(x.args))
		return
	}
	policy := "append"
	if x.nargs() == 4 {
		policy = strings.ToLower(x.arg(3))
		if policy != "append" && policy != "replace" && policy != "flush" {
			x.err("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	timeout := functionLoadTimeout
	if x.s.loading {
		timeout = 0
	}
	if errMsg := f.restore(x.args[2], policy, timeout); errMsg != "" {
		x.err(errMsg)
		return
	}
	x.dirty(1)
	x.ok()
}

// functionList is FUNCTION LIST [WITHCODE] [LIBRARYNAME pattern].
func (x *Ctx) functionList(f *functionLibs) {
	withCode, pattern, filtered := false, "", false
	for i := 2; i < x.nargs(); i++ {
		switch {
		case !withCode && x.argIs(i, "withcode"):
			withCode = true
		case !filtered && x.argIs(i, "libraryname"):
			if i >= x.nargs()-1 {
				x.err("ERR library name argument was not given")
				return
			}
			pattern, filtered = strings.ToLower(x.arg(i+1)), true
			i++
		default:
			x.err("ERR Unknown argument " + x.arg(i))
			return
		}
	}
	var libs []*funcLib
	for _, lib := range f.sorted() {
		if !filtered || globMatch(pattern, strings.ToLower(lib.name)) { // LIBRARYNAME ignores case
			libs = append(libs, lib)
		}
	}
	x.w.Array(len(libs))
	for _, lib := range libs {
		if withCode {
			x.w.Map(4)
		} else {
			x.w.Map(3)
		}
		x.w.BulkString("library_name")
		x.w.BulkString(lib.name)
		x.w.BulkString("engine")
		x.w.BulkString("LUA")
		x.w.BulkString("functions")
		x.w.Array(len(lib.funcs))
		for _, fd := range lib.funcs {
			x.w.Map(3)
			x.w.BulkString("name")
			x.w.BulkString(fd.name)
			x.w.BulkString("description")
			if fd.hasDesc {
				x.w.BulkString(fd.desc)
			} else {
				x.w.Null()
			}
			x.w.BulkString("flags")
			var flags []string
			for bit, name := range scriptFlagNames {
				if fd.flags&(1<<bit) != 0 {
					flags = append(flags, name)
				}
			}
			x.w.Set(len(flags))
			for _, name := range flags {
				x.w.Simple(name)
			}
		}
		if withCode {
			x.w.BulkString("library_code")
			x.w.BulkString(lib.code)
		}
	}
}

// fcallCmd builds FCALL and FCALL_RO: function numkeys key... arg...
func fcallCmd(readOnly bool) func(x *Ctx) {
	return func(x *Ctx) {
		f := x.s.functionLibs()
		fd := f.funcs[strings.ToLower(x.arg(1))]
		if fd == nil {
			x.err("ERR Function not found")
			return
		}
		numkeys, ok := parseRedisInt(x.args[2])
		switch {
		case !ok:
			x.err("ERR Bad number of keys provided")
			return
		case numkeys > int64(x.nargs()-3):
			x.err(msgNumKeysTooMany)
			return
		case numkeys < 0:
			x.err(msgNumKeysNegative)
			return
		}
		f.fcall(x, fd, x.args[3:3+numkeys], x.args[3+numkeys:], readOnly)
	}
}

var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}
