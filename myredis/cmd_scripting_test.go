package myredis_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// Every expected reply below was checked byte for byte against redis-server 7.0.15.

type replyCase struct {
	name string
	cmd  []string
	want string
}

func runReplyCases(t *testing.T, c *redistest.Conn, cases []replyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, c.Do(tc.cmd...), "%q", tc.cmd)
		})
	}
}

// evalErr is the reply to EVAL body 0 when body fails at line with msg.
func evalErr(body, msg string, line int) replyCase {
	return replyCase{msg, []string{"EVAL", body, "0"}, scriptError(body, msg, line)}
}

func TestEvalArgumentErrors(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	runReplyCases(t, c, []replyCase{
		{"arity", []string{"EVAL", "return 1"}, "-ERR wrong number of arguments for 'eval' command\r\n"},
		{"evalsha arity", []string{"EVALSHA", "abc"}, "-ERR wrong number of arguments for 'evalsha' command\r\n"},
		{"numkeys not a number", []string{"EVAL", "return 1", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{"numkeys negative", []string{"EVAL", "return 1", "-1"}, "-ERR Number of keys can't be negative\r\n"},
		{"numkeys too big", []string{"EVAL", "return 1", "2", "a"}, "-ERR Number of keys can't be greater than number of args\r\n"},
		{"evalsha short sha", []string{"EVALSHA", "abc", "x"}, "-NOSCRIPT No matching script. Please use EVAL.\r\n"},
		{"evalsha unknown", []string{"EVALSHA", strings.Repeat("0", 40), "0"}, "-NOSCRIPT No matching script. Please use EVAL.\r\n"},
		{"evalsha_ro unknown", []string{"EVALSHA_RO", strings.Repeat("0", 40), "0"}, "-NOSCRIPT No matching script. Please use EVAL.\r\n"},
		{"evalsha bad numkeys", []string{"EVALSHA", strings.Repeat("0", 40), "x"}, "-ERR value is not an integer or out of range\r\n"},
		{"compile error", []string{"EVAL", "return 1 +", "0"},
			"-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n"},
		{"compile error on line", []string{"EVAL", "x = = 1", "0"},
			"-ERR Error compiling script (new function): user_script:1: unexpected symbol near '='\r\n"},
		{"shebang without body", []string{"EVAL", "#!lua", "0"}, "-ERR Invalid script shebang\r\n"},
		{"shebang engine", []string{"EVAL", "#!python\nreturn 1", "0"}, "-ERR Unexpected engine in script shebang: #!python\r\n"},
		{"shebang flag", []string{"EVAL", "#!lua flags=foo\nreturn 1", "0"}, "-ERR Unexpected flag in script shebang: foo\r\n"},
		{"shebang option", []string{"EVAL", "#!lua name=x\nreturn 1", "0"}, "-ERR Unknown lua shebang option: name=x\r\n"},
		{"shebang ok", []string{"EVAL", "#!lua flags=no-writes,allow-oom\nreturn 1", "0"}, ":1\r\n"},
	})
}

func TestScriptRaisedErrors(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	c.Do("SET", "s", "notanumber")
	c.Do("SET", "str", "v")
	noscript := func(cmd string) replyCase {
		body := "return redis.call(" + cmd + ")"
		return replyCase{"noscript " + cmd, []string{"EVAL", body, "0"},
			scriptError(body, "ERR This Redis command is not allowed from script", 1)}
	}
	runReplyCases(t, c, []replyCase{
		evalErr("return redis.call()", "ERR Please specify at least one argument for this redis lib call", 1),
		evalErr("return redis.call('nosuch')", "ERR Unknown Redis command called from script", 1),
		evalErr("return redis.call(1)", "ERR Unknown Redis command called from script", 1),
		evalErr("return redis.call('get')", "ERR Wrong number of args calling Redis command from script", 1),
		evalErr("return redis.call('get','a','b')", "ERR Wrong number of args calling Redis command from script", 1),
		evalErr("return redis.call('get',{})", "ERR Lua redis lib command arguments must be strings or integers", 1),
		evalErr("return redis.call('get',nil)", "ERR Lua redis lib command arguments must be strings or integers", 1),
		evalErr("return redis.call('get',true)", "ERR Lua redis lib command arguments must be strings or integers", 1),
		evalErr("return redis.call('incr','s')", "ERR value is not an integer or out of range", 1),
		evalErr("return redis.call('incr','str')", "ERR value is not an integer or out of range", 1),
		evalErr("return redis.call('select','99')", "ERR DB index is out of range", 1),
		evalErr("local a = 1\nlocal b = redis.call('nosuch')\nreturn b", "ERR Unknown Redis command called from script", 2),
		evalErr("local function f()\n  return redis.call('nosuch')\nend\n\nf()", "ERR Unknown Redis command called from script", 2),
		noscript("'multi'"), noscript("'exec'"), noscript("'discard'"), noscript("'watch','k'"),
		noscript("'unwatch'"), noscript("'eval','return 1','0'"), noscript("'evalsha','x','0'"),
		noscript("'eval_ro','return 1','0'"), noscript("'script','load','return 1'"),
		noscript("'client','id'"), noscript("'config','get','hz'"), noscript("'auth','x'"),
		noscript("'hello'"), noscript("'quit'"), noscript("'reset'"),
		// runtime errors
		evalErr("error('boom')", "ERR user_script:1: boom", 1),
		evalErr("error('boom', 0)", "ERR boom", 1),
		evalErr("error({err='MY boom'})", "MY boom", 1),
		evalErr("error()", "ERR nil", 1),
		evalErr("error(123)", "ERR user_script:1: 123", 1),
		evalErr("\n\nerror('x')", "ERR user_script:3: x", 3),
		evalErr("local function f()\n  error('deep')\nend\n\nf()", "ERR user_script:2: deep", 2),
		evalErr("local function f() error('inner', 2) end\nf()", "ERR user_script:2: inner", 1),
		evalErr("#!lua\nerror('x')", "ERR user_script:2: x", 2),
		evalErr("assert(false)", "ERR user_script:1: assertion failed!", 1),
		evalErr("error('a\\nb')", "ERR user_script:1: a b", 1),
		evalErr("local function f() return 1 + f() end return f()", "ERR user_script:1: stack overflow", 1),
		evalErr("return unpack({}, 1, 1e7)", "ERR user_script:1: too many results to unpack", 1),
		// Redis would try; MyRedis refuses a string over 512 MB in one step
		evalErr("return string.rep('x', 1e10)", "ERR user_script:1: not enough memory", 1),
		// the redis.* helpers
		evalErr("return redis.sha1hex()", "ERR wrong number of arguments", 1),
		evalErr("return redis.log()", "ERR redis.log() requires two arguments or more.", 1),
		evalErr("return redis.log(1)", "ERR redis.log() requires two arguments or more.", 1),
		evalErr("return redis.log('x','y')", "ERR First argument must be a number (log level).", 1),
		evalErr("return redis.log(99,'y')", "ERR Invalid debug level.", 1),
		evalErr("return redis.set_repl()", "ERR redis.set_repl() requires two arguments.", 1),
		evalErr("return redis.set_repl(99)", "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.", 1),
		evalErr("return redis.setresp()", "ERR redis.setresp() requires one argument.", 1),
		evalErr("return redis.setresp(4)", "ERR RESP version must be 2 or 3.", 1),
		evalErr("return redis.acl_check_cmd('nosuch')", "ERR Invalid command passed to redis.acl_check_cmd()", 1),
		evalErr("return math.random(0)", "ERR user_script:1: bad argument #1 to 'random' (interval is empty)", 1),
		evalErr("return string.format('%999999999s', 'x')", "ERR user_script:1: invalid format (width or precision too long)", 1),
		evalErr("return string.format('%z', 1)", "ERR user_script:1: invalid option '%z' to 'format'", 1),
		evalErr("return string.format('%d')", "ERR user_script:1: bad argument #2 to 'format' (no value)", 1),
		evalErr("return math.random(1,2,3)", "ERR user_script:1: wrong number of arguments", 1),
		// pcall hands the error back instead of raising it
		{"pcall unknown", []string{"EVAL", "return redis.pcall('nosuch')", "0"}, "-ERR Unknown Redis command called from script\r\n"},
		{"pcall arity", []string{"EVAL", "return redis.pcall('get')", "0"}, "-ERR Wrong number of args calling Redis command from script\r\n"},
		{"pcall no args", []string{"EVAL", "return redis.pcall()", "0"}, "-ERR Please specify at least one argument for this redis lib call\r\n"},
		{"pcall runtime", []string{"EVAL", "return redis.pcall('incr','s')", "0"}, "-ERR value is not an integer or out of range\r\n"},
		{"pcall wrongtype", []string{"EVAL", "redis.call('del','z') redis.call('set','z','1') return redis.pcall('incrbyfloat','z','x')", "0"},
			"-ERR value is not a valid float\r\n"},
		{"error_reply", []string{"EVAL", "return redis.error_reply('oops')", "0"}, "-ERR oops\r\n"},
		{"error_reply code", []string{"EVAL", "return redis.error_reply('MY oops')", "0"}, "-MY oops\r\n"},
		{"error_reply dash", []string{"EVAL", "return redis.error_reply('-MY oops')", "0"}, "-MY oops\r\n"},
		{"error_reply no args", []string{"EVAL", "return redis.error_reply()", "0"}, "-ERR wrong number or type of arguments\r\n"},
		{"error_reply number", []string{"EVAL", "return redis.error_reply(1)", "0"}, "-ERR wrong number or type of arguments\r\n"},
		{"status_reply no args", []string{"EVAL", "return redis.status_reply()", "0"}, "-ERR wrong number or type of arguments\r\n"},
		{"Lua pcall gets the message", []string{"EVAL", "return {pcall(function() redis.call('nosuch') end)}", "0"},
			"*2\r\n$-1\r\n" + bulk("ERR Unknown Redis command called from script")},
		{"Lua pcall of error()", []string{"EVAL", "return {pcall(function() error('x') end)}", "0"},
			"*2\r\n$-1\r\n" + bulk("user_script:1: x")},
	})
}

func TestScriptReadOnly(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	c.Do("SET", "n", "inf")
	runReplyCases(t, c, []replyCase{
		{"eval_ro write", []string{"EVAL_RO", "return redis.call('set','n',1)", "0"},
			scriptError("return redis.call('set','n',1)", "ERR Write commands are not allowed from read-only scripts.", 1)},
		{"eval_ro pcall write", []string{"EVAL_RO", "return redis.pcall('set','n',1)", "0"},
			"-ERR Write commands are not allowed from read-only scripts.\r\n"},
		{"eval_ro del", []string{"EVAL_RO", "return redis.call('del','x')", "0"},
			scriptError("return redis.call('del','x')", "ERR Write commands are not allowed from read-only scripts.", 1)},
		{"eval_ro read", []string{"EVAL_RO", "return redis.call('get','n')", "0"}, bulk("inf")},
		{"no-writes flag", []string{"EVAL", "#!lua flags=no-writes\nreturn redis.call('set','a','1')", "0"},
			scriptError("#!lua flags=no-writes\nreturn redis.call('set','a','1')", "ERR Write commands are not allowed from read-only scripts.", 2)},
		{"evalsha_ro", []string{"EVALSHA_RO", sha1Hex("return redis.call('get','n')"), "0"}, bulk("inf")},
		{"nothing written", []string{"GET", "n"}, bulk("inf")},
	})
}

func TestScriptSandbox(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	nonexistent := func(name string) replyCase {
		return evalErr("return "+name, "ERR user_script:1: Script attempted to access nonexistent global variable '"+name+"'", 1)
	}
	readonly := func(body string) replyCase {
		return evalErr(body, "ERR user_script:1: Attempt to modify a readonly table", 1)
	}
	runReplyCases(t, c, []replyCase{
		nonexistent("x"), nonexistent("os"), nonexistent("io"), nonexistent("loadfile"), nonexistent("dofile"),
		nonexistent("print"), nonexistent("require"), nonexistent("package"), nonexistent("debug"),
		nonexistent("setfenv"), nonexistent("getfenv"), nonexistent("newproxy"), nonexistent("module"),
		readonly("x = 1"), readonly("redis.call = 1"), readonly("string.len = 1"), readonly("_G.x = 1"),
		readonly("KEYS = {}"), readonly("function f() end"), readonly("math.random = nil"),
		readonly("getmetatable('').__index.upper = nil"),
		evalErr("rawset(_G,'x',1)", "ERR Attempt to modify a readonly table", 1),
		evalErr("setmetatable(_G, {})", "ERR Attempt to modify a readonly table", 1),
		{"loadstring chunk", []string{"EVAL", "return loadstring('x = 1')()", "0"},
			`-ERR [string "x = 1"]:1: Attempt to modify a readonly table script: ` + sha1Hex("return loadstring('x = 1')()") + ", on x = 1:1.\r\n"},
		{"string methods still work", []string{"EVAL", "return ('x'):upper()", "0"}, bulk("X")},
		{"pairs keeps the proxy", []string{"EVAL", "local f, s, i = pairs(string) s.len = nil", "0"},
			scriptError("local f, s, i = pairs(string) s.len = nil", "ERR user_script:1: Attempt to modify a readonly table", 1)},
		// gopher-lua's load would call an endless reader until memory runs out
		{"load stops at a syntax error", []string{"EVAL", "local f, e = load(function() return 'return +' end) return e", "0"},
			bulk("(load):1: unexpected symbol near '+'")},
		{"load reader error", []string{"EVAL", "local f, e = load(function() error('in reader') end) return e", "0"},
			"-ERR user_script:1: in reader\r\n"},
		{"libraries present", []string{"EVAL", "return {type(string.len), type(table.concat), type(math.floor), type(coroutine.wrap), type(loadstring), type(pcall), type(rawget)}", "0"},
			"*7\r\n" + strings.Repeat(bulk("function"), 7)},
		{"KEYS is writable", []string{"EVAL", "KEYS[1] = 'x' return KEYS[1]", "1", "k"}, bulk("x")},
		{"rawget sees through", []string{"EVAL", "return rawget(redis, 'call') ~= nil", "0"}, ":1\r\n"},
		{"_VERSION", []string{"EVAL", "return _VERSION", "0"}, bulk("Lua 5.1")},
		{"no global leaked", []string{"EVAL", "return rawget(_G, 'x') == nil", "0"}, ":1\r\n"},
	})
}

func TestScriptCjsonAndBit(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	eval := func(body, want string) replyCase { return replyCase{body, []string{"EVAL", body, "0"}, want} }
	runReplyCases(t, c, []replyCase{
		eval("return cjson.encode({1,2,3,'x',true,false})", bulk(`[1,2,3,"x",true,false]`)),
		eval("return cjson.encode({x={y={1,cjson.null}}})", bulk(`{"x":{"y":[1,null]}}`)),
		eval("return cjson.encode({})", bulk(`{}`)),
		eval("return cjson.encode({[1]=1,[3]=2})", bulk(`[1,null,2]`)),
		eval("return cjson.encode('a/b\"c\\n\\1')", bulk(`"a\/b\"c\n\u0001"`)),
		eval("return cjson.encode(1/3)", bulk("0.33333333333333")),
		evalErr("return cjson.encode(0/0)", "ERR user_script:1: Cannot serialise number: must not be NaN or Inf", 1),
		evalErr("return cjson.encode({[1]=1,[100]=2})", "ERR user_script:1: Cannot serialise table: excessively sparse array", 1),
		evalErr("return cjson.encode({[true]=1})", "ERR user_script:1: Cannot serialise boolean: table key must be a number or string", 1),
		evalErr("return cjson.encode(function() end)", "ERR user_script:1: Cannot serialise function: type not supported", 1),
		evalErr("local t = {} t.self = t return cjson.encode(t)", "ERR user_script:1: Cannot serialise, excessive nesting (1001)", 1),
		eval("return cjson.decode('[1,2,{\"a\":[true,null]}]')[3].a[1]", ":1\r\n"),
		eval("return cjson.decode('null') == cjson.null", ":1\r\n"),
		eval("return cjson.decode('\"\\\\ud83d\\\\ude00\"')", bulk("\U0001F600")),
		evalErr("return cjson.decode('[1,2')", "ERR user_script:1: Expected comma or array end but found T_END at character 5", 1),
		evalErr("return cjson.decode('')", "ERR user_script:1: Expected value but found T_END at character 1", 1),
		evalErr("return cjson.decode('x')", "ERR user_script:1: Expected value but found invalid token at character 1", 1),
		evalErr("return cjson.decode('[1] x')", "ERR user_script:1: Expected the end but found invalid token at character 5", 1),
		evalErr("return cjson.decode('{1:2}')", "ERR user_script:1: Expected object key string but found T_NUMBER at character 2", 1),
		evalErr("return cjson.decode('\"abc')", "ERR user_script:1: Expected value but found unexpected end of string at character 5", 1),
		eval("return {bit.band(0xff, 0x0f), bit.bor(1,2,4), bit.bxor(5,1), bit.bnot(0), bit.lshift(1,31), bit.arshift(-16, 2), bit.tobit(2^32+5)}",
			"*7\r\n:15\r\n:7\r\n:4\r\n:-1\r\n:-2147483648\r\n:-4\r\n:5\r\n"),
		eval("return {bit.tohex(255), bit.tohex(255, -4)}", "*2\r\n"+bulk("000000ff")+bulk("00FF")),
		evalErr("return bit.band('x')", "ERR user_script:1: bad argument #1 to 'band' (number expected, got string)", 1),
		evalErr("bit.band = nil", "ERR user_script:1: Attempt to modify a readonly table", 1),
		evalErr("cjson.null = 1", "ERR user_script:1: Attempt to modify a readonly table", 1),
	})
}

func TestScriptConversions(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	eval := func(name, body, want string) replyCase {
		return replyCase{name, []string{"EVAL", body, "0"}, want}
	}
	runReplyCases(t, c, []replyCase{
		eval("array to first nil", "return {1,2,3.9,'x',nil,4}", "*4\r\n:1\r\n:2\r\n:3\r\n$1\r\nx\r\n"),
		eval("float truncated", "return 3.99", ":3\r\n"),
		eval("negative truncated", "return -3.99", ":-3\r\n"),
		eval("true", "return true", ":1\r\n"),
		eval("false", "return false", "$-1\r\n"),
		eval("nil", "return nil", "$-1\r\n"),
		eval("status", "return {ok='fine'}", "+fine\r\n"),
		eval("error", "return {err='bad thing'}", "-bad thing\r\n"),
		eval("status newlines", "return {ok='a\\r\\nb'}", "+a  b\r\n"),
		eval("error newlines", "return {err='a\\r\\nb'}", "-a  b\r\n"),
		eval("bulk with newline", "return 'a\\r\\nb'", "$4\r\na\r\nb\r\n"),
		eval("nested", "return {1,{2,{3,'x'}},{ok='s'},{err='e'}}", "*4\r\n:1\r\n*2\r\n:2\r\n*2\r\n:3\r\n$1\r\nx\r\n+s\r\n-e\r\n"),
		eval("ok not a string", "return {ok=1}", "*0\r\n"),
		eval("err not a string", "return {err=1, 5}", "*1\r\n:5\r\n"),
		eval("double", "return {double=3.5}", "$3\r\n3.5\r\n"),
		eval("empty", "return {}", "*0\r\n"),
		eval("leading nil", "return {nil, 1}", "*0\r\n"),
		eval("nan", "return 0/0", ":-9223372036854775808\r\n"),
		eval("huge", "return 1e300", ":-9223372036854775808\r\n"),
		eval("function", "return function() end", "$-1\r\n"),
		eval("sha1hex", "return redis.sha1hex('')", bulk("da39a3ee5e6b4b0d3255bfef95601890afd80709")),
		eval("sha1hex number", "return redis.sha1hex(1)", bulk("356a192b7913b04c54574d18c28d46e6395428ab")),
		eval("status_reply", "return redis.status_reply('fine')", "+fine\r\n"),
		eval("KEYS and ARGV", "return {#KEYS, #ARGV}", "*2\r\n:0\r\n:0\r\n"),
		{"KEYS and ARGV values", []string{"EVAL", "return {KEYS[1],KEYS[2],ARGV[1],ARGV[2]}", "2", "k1", "k2", "a1", "a2"},
			"*4\r\n$2\r\nk1\r\n$2\r\nk2\r\n$2\r\na1\r\n$2\r\na2\r\n"},
		// replies to Lua
		eval("nil bulk is false", "local r = redis.call('get','nokey') return type(r) .. ':' .. tostring(r)", bulk("boolean:false")),
		eval("status is {ok=}", "local r = redis.call('set','s','v') return type(r) .. ':' .. r.ok", bulk("table:OK")),
		eval("error is {err=}", "local r = redis.pcall('incr','s') return type(r) .. ':' .. r.err", bulk("table:ERR value is not an integer or out of range")),
		eval("integer is number", "return type(redis.call('incr','n'))", bulk("number")),
		eval("array is table", "return redis.call('mget','s','nokey')", "*2\r\n$1\r\nv\r\n$-1\r\n"),
		eval("status passed through", "return redis.call('ping')", "+PONG\r\n"),
		// Lua numbers as command arguments: "%.17g"
		eval("float argument", "redis.call('set','f',3.5) return redis.call('get','f')", bulk("3.5")),
		eval("big argument", "redis.call('set','f',1e20) return redis.call('get','f')", bulk("1e+20")),
		eval("integer argument", "redis.call('set','f',123456789012345) return redis.call('get','f')", bulk("123456789012345")),
		eval("precise argument", "redis.call('set','f',-0.1) return redis.call('get','f')", bulk("-0.10000000000000001")),
		eval("inf argument", "redis.call('set','f',1/0) return redis.call('get','f')", bulk("inf")),
		eval("tostring %.14g", "return tostring(1/3)", bulk("0.33333333333333")),
		eval("tostring 1e15", "return tostring(1e15)", bulk("1e+15")),
	})
}

func TestScriptCache(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	sha := sha1Hex("return 1")
	runReplyCases(t, c, []replyCase{
		{"load", []string{"SCRIPT", "LOAD", "return 1"}, bulk(sha)},
		{"load compile error", []string{"SCRIPT", "LOAD", "return 1 +"},
			"-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n"},
		{"exists", []string{"SCRIPT", "EXISTS", sha, strings.Repeat("0", 40)}, "*2\r\n:1\r\n:0\r\n"},
		{"exists any case", []string{"SCRIPT", "EXISTS", strings.ToUpper(sha)}, "*1\r\n:1\r\n"},
		{"evalsha", []string{"EVALSHA", sha, "0"}, ":1\r\n"},
		{"evalsha any case", []string{"EVALSHA", strings.ToUpper(sha), "0"}, ":1\r\n"},
		{"eval caches", []string{"EVAL", "return 2", "0"}, ":2\r\n"},
		{"cached by eval", []string{"EVALSHA", sha1Hex("return 2"), "0"}, ":2\r\n"},
		{"flush bad option", []string{"SCRIPT", "FLUSH", "foo"}, "-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n"},
		{"flush extra", []string{"SCRIPT", "FLUSH", "sync", "x"}, "-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n"},
		{"flush", []string{"SCRIPT", "FLUSH", "ASYNC"}, "+OK\r\n"},
		{"gone", []string{"SCRIPT", "EXISTS", sha}, "*1\r\n:0\r\n"},
		{"noscript", []string{"EVALSHA", sha, "0"}, "-NOSCRIPT No matching script. Please use EVAL.\r\n"},
		{"kill idle", []string{"SCRIPT", "KILL"}, "-NOTBUSY No scripts in execution right now.\r\n"},
		{"kill arity", []string{"SCRIPT", "KILL", "x"}, "-ERR wrong number of arguments for 'script|kill' command\r\n"},
		{"load arity", []string{"SCRIPT", "LOAD"}, "-ERR wrong number of arguments for 'script|load' command\r\n"},
		{"exists arity", []string{"SCRIPT", "EXISTS"}, "-ERR wrong number of arguments for 'script|exists' command\r\n"},
		{"help arity", []string{"SCRIPT", "HELP", "x"}, "-ERR wrong number of arguments for 'script|help' command\r\n"},
		{"debug option", []string{"SCRIPT", "DEBUG", "foo"}, "-ERR Use SCRIPT DEBUG YES/SYNC/NO\r\n"},
		{"debug no", []string{"SCRIPT", "DEBUG", "no"}, "+OK\r\n"},
		{"unknown", []string{"SCRIPT", "foo"}, "-ERR unknown subcommand 'foo'. Try SCRIPT HELP.\r\n"},
		{"arity", []string{"SCRIPT"}, "-ERR wrong number of arguments for 'script' command\r\n"},
	})
}

// TestScriptSelectStaysInScript: since Redis 7.0 a SELECT inside a script changes
// only the script's database, not the caller's.
func TestScriptSelectStaysInScript(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	assert.Equal(t, "+OK\r\n", c.Do("EVAL", "redis.call('select','1') return redis.call('set','indb1','x')", "0"))
	assert.Equal(t, "$-1\r\n", c.Do("GET", "indb1"))
	c.Do("SELECT", "1")
	assert.Equal(t, bulk("x"), c.Do("GET", "indb1"))
	assert.Equal(t, bulk("x"), c.Do("EVAL", "return redis.call('get','indb1')", "0"), "a script starts in the caller's db")
}

// TestScriptIsAtomic: a read-modify-write in a script never loses an update,
// because nothing else runs on the executor until the script returns.
func TestScriptIsAtomic(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	const clients, each = 20, 50
	body := "local v = tonumber(redis.call('get', KEYS[1]) or '0') redis.call('set', KEYS[1], v + 1) return v + 1"
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		c := redistest.Dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				if r, err := c.DoErr("EVAL", body, "1", "counter"); err != nil || r[0] != ':' {
					t.Errorf("EVAL: %q %v", r, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, bulk(strconv.Itoa(clients*each)), redistest.Dial(t, addr).Do("GET", "counter"))
}

// TestScriptKill: a script that runs past lua-time-limit makes every other
// client get BUSY until SCRIPT KILL stops it; a script that has written cannot
// be killed and runs to its end.
func TestScriptKill(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	runner, other := redistest.Dial(t, addr), redistest.Dial(t, addr)
	require.Equal(t, "+OK\r\n", other.Do("CONFIG", "SET", "lua-time-limit", "50"))
	require.Equal(t, bulk("lua-time-limit")+bulk("50"), strings.TrimPrefix(other.Do("CONFIG", "GET", "lua-time-limit"), "*2\r\n"))

	waitBusy := func() {
		t.Helper()
		for i := 0; ; i++ {
			r := other.Do("GET", "k")
			if r == "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n" {
				return
			}
			if i > 500 {
				t.Fatalf("never BUSY; last reply %q", r)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	tx := redistest.Dial(t, addr)
	require.Equal(t, "+OK\r\n", tx.Do("MULTI"))
	require.Equal(t, "+QUEUED\r\n", tx.Do("SET", "a", "1"))
	loop := "local i = 0\nwhile true do\n  i = i + 1\nend"
	send(t, runner, "EVAL", loop, "0")
	waitBusy()
	// a transaction that lost a command to BUSY must not run the rest
	assert.Equal(t, "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n", tx.Do("SET", "b", "2"))
	assert.Equal(t, "-ERR unknown command 'nosuch', with args beginning with: \r\n", other.Do("nosuch"))
	assert.Equal(t, "+OK\r\n", other.Do("SCRIPT", "KILL"))
	reply := receive(t, runner)
	assert.Regexp(t, `^-ERR Script killed by user with SCRIPT KILL\.\.\. script: `+sha1Hex(loop)+`, on @user_script:[234]\.\r\n$`, reply)
	assert.Equal(t, "+PONG\r\n", other.Do("PING"), "the server serves again")
	assert.Equal(t, "-EXECABORT Transaction discarded because of previous errors.\r\n", tx.Do("EXEC"))
	assert.Equal(t, "$-1\r\n", other.Do("GET", "a"))

	// pcall cannot swallow the kill
	stubborn := "while true do pcall(function() while true do end end) end"
	send(t, runner, "EVAL", stubborn, "0")
	waitBusy()
	assert.Equal(t, "+OK\r\n", other.Do("SCRIPT", "KILL"))
	assert.Contains(t, receive(t, runner), "-ERR Script killed by user with SCRIPT KILL...")

	// a script that wrote runs on; it ends by itself once the test clears its flag
	// ... which it cannot, the server being busy, so it ends after a time instead.
	writer := "redis.call('set','w','1')\nlocal t = redis.call('time')\nlocal start = t[1] * 1000000 + t[2]\n" +
		"while true do\n  t = redis.call('time')\n  if t[1] * 1000000 + t[2] - start > 300000 then return 'done' end\nend"
	send(t, runner, "EVAL", writer, "0")
	waitBusy()
	assert.Equal(t, "-UNKILLABLE Sorry the script already executed write commands against the dataset. "+
		"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n",
		other.Do("SCRIPT", "KILL"))
	assert.Equal(t, bulk("done"), receive(t, runner))
	assert.Equal(t, bulk("1"), other.Do("GET", "w"))
	assert.Equal(t, "-NOTBUSY No scripts in execution right now.\r\n", other.Do("SCRIPT", "KILL"))
}

// TestCloseStopsAScript: closing the server stops a script that would never end,
// even one that has written.
func TestCloseStopsAScript(t *testing.T) {
	s, addr := redistest.StartMyRedisConfig(t, myredis.Config{LuaTimeLimit: 20})
	runner, other := redistest.Dial(t, addr), redistest.Dial(t, addr)
	send(t, runner, "EVAL", "redis.call('set', 'k', 'v') while true do end", "0")
	for i := 0; other.Do("GET", "k")[0] != '-'; i++ {
		require.Less(t, i, 500, "the script never became busy")
		time.Sleep(10 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close is stuck behind the script")
	}
}

// TestGoRedisScript: go-redis's Script.Run tries EVALSHA and falls back to EVAL
// on NOSCRIPT.
func TestGoRedisScript(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	admit := redis.NewScript(`
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n > tonumber(ARGV[2]) then
  redis.call('DECRBY', KEYS[1], ARGV[1])
  return redis.error_reply('FULL no room')
end
return n`)
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	exists, err := admit.Exists(ctx, rdb).Result()
	require.NoError(t, err)
	assert.Equal(t, []bool{false}, exists)

	n, err := admit.Run(ctx, rdb, []string{"active"}, 3, 5).Int() // EVALSHA -> NOSCRIPT -> EVAL
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	exists, _ = admit.Exists(ctx, rdb).Result()
	assert.Equal(t, []bool{true}, exists, "EVAL cached the script")

	n, err = admit.EvalSha(ctx, rdb, []string{"active"}, 2, 5).Int()
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	err = admit.Run(ctx, rdb, []string{"active"}, 1, 5).Err()
	assert.EqualError(t, err, "FULL no room")
	assert.Equal(t, "5", rdb.Get(ctx, "active").Val())

	ro := redis.NewScript(`return redis.call('GET', KEYS[1])`)
	v, err := ro.RunRO(ctx, rdb, []string{"active"}).Text()
	require.NoError(t, err)
	assert.Equal(t, "5", v)
}
