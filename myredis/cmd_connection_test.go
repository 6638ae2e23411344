package myredis_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// hello2 is HELLO's reply in RESP2 for a client id.
func hello2(id int64) string {
	return array(bulk("server"), bulk("redis"), bulk("version"), bulk("7.0.15"), bulk("proto"), num(2),
		bulk("id"), num(id), bulk("mode"), bulk("standalone"), bulk("role"), bulk("master"), bulk("modules"), empty)
}

// clientID asks the server for c's id.
func clientID(t *testing.T, c *redistest.Conn) int64 {
	t.Helper()
	reply := c.Do("CLIENT", "ID")
	id, err := strconv.ParseInt(strings.TrimSpace(reply[1:]), 10, 64)
	if err != nil || reply[0] != ':' {
		t.Fatalf("CLIENT ID: %q", reply)
	}
	return id
}

func TestConnectionCommands(t *testing.T) {
	runGroup(t, []groupCase{
		{"ping echo", []step{
			do(simple("PONG"), "PING"),
			do(bulk("hi"), "PING", "hi"),
			do(arity("ping"), "PING", "a", "b"),
			do(bulk("a\x00b"), "ECHO", "a\x00b"),
			do(arity("echo"), "ECHO"),
		}},
		{"unknown command and arity", []step{
			do(errRe("ERR unknown command 'NOSUCH', with args beginning with: "), "NOSUCH"),
			do(errRe("ERR unknown command 'nosuch', with args beginning with: 'a' 'b c' "), "nosuch", "a", "b c"),
			do(errRe("ERR unknown command 'x', with args beginning with: '"+strings.Repeat("y", 128)+"' "), "x", strings.Repeat("y", 200), "z"),
			do(arity("get"), "GET"),
			do(errRe("ERR unknown subcommand 'nosuch'. Try CLIENT HELP."), "CLIENT", "nosuch"),
			do(arity("client|setname"), "CLIENT", "SETNAME"),
		}},
		{"auth without a password", []step{
			do(errRe("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"), "AUTH", "x"),
			do(ok, "AUTH", "default", "anything"),
			do(errRe("WRONGPASS invalid username-password pair or user is disabled."), "AUTH", "bob", "x"),
			do(syntax, "AUTH", "a", "b", "c"),
		}},
		{"hello", []step{
			do(errRe("NOPROTO unsupported protocol version"), "HELLO", "4"),
			do(errRe("NOPROTO unsupported protocol version"), "HELLO", "1"),
			do(errRe("ERR Protocol version is not an integer or out of range"), "HELLO", "two"),
			do(errRe("ERR Syntax error in HELLO option 'FOO'"), "HELLO", "2", "FOO"),
			do(errRe("ERR Syntax error in HELLO option 'AUTH'"), "HELLO", "2", "AUTH", "default"),
			do(errRe("ERR Client names cannot contain spaces, newlines or special characters."), "HELLO", "2", "SETNAME", "a b"),
			do(null, "CLIENT", "GETNAME"),
		}},
		{"client", []step{
			do(null, "CLIENT", "GETNAME"),
			do(ok, "CLIENT", "SETNAME", "conn-1"),
			do(bulk("conn-1"), "CLIENT", "GETNAME"),
			do(errRe("ERR Client names cannot contain spaces, newlines or special characters."), "CLIENT", "SETNAME", "a b"),
			do(ok, "CLIENT", "SETNAME", ""),
			do(null, "CLIENT", "GETNAME"),
			do(ok, "CLIENT", "SETINFO", "lib-name", "go-redis(,go1.26)"),
			do(ok, "CLIENT", "SETINFO", "LIB-VER", "9.23.0"),
			do(errRe("ERR Unrecognized option 'lib-foo'"), "CLIENT", "SETINFO", "lib-foo", "x"),
			do(errRe("ERR lib-name cannot contain spaces, newlines or special characters."), "CLIENT", "SETINFO", "lib-name", "a b"),
			do(ok, "CLIENT", "NO-EVICT", "on"),
			do(syntax, "CLIENT", "NO-EVICT", "maybe"),
			do(syntax, "CLIENT", "LIST", "x"),
			do(errRe("ERR Unknown client type 'x'"), "CLIENT", "LIST", "TYPE", "x"),
			do(bulk(""), "CLIENT", "LIST", "TYPE", "pubsub"),
			do(bulk(""), "CLIENT", "LIST", "ID", "999999999"),
		}},
		{"select per connection", []step{
			do(ok, "SELECT", "2"),
			do(ok, "SET", "k", "v"),
			do(simple("RESET"), "RESET"),
			do(null, "GET", "k"), // RESET went back to db 0
			do(ok, "SELECT", "2"),
			do(bulk("v"), "GET", "k"),
		}},
	})
}

func TestHelloAndClientInfo(t *testing.T) {
	c, _, addr := start(t)
	id := clientID(t, c)
	mustDo(t, c, hello2(id), "HELLO")
	mustDo(t, c, hello2(id), "HELLO", "2", "SETNAME", "named")
	mustDo(t, c, bulk("named"), "CLIENT", "GETNAME")
	mustDo(t, c, ok, "CLIENT", "SETINFO", "lib-name", "mylib")
	other := redistest.Dial(t, addr)
	otherID := clientID(t, other)
	if otherID <= id {
		t.Fatalf("client ids not increasing: %d then %d", id, otherID)
	}
	list := c.Do("CLIENT", "LIST")
	for _, want := range []string{
		"id=" + strconv.FormatInt(id, 10) + " ", " name=named ", " lib-name=mylib ", " cmd=client|list ",
		"id=" + strconv.FormatInt(otherID, 10) + " ", " cmd=client|id ", " db=0 ", " resp=2 ",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("CLIENT LIST lacks %q:\n%s", want, list)
		}
	}
	one := c.Do("CLIENT", "LIST", "ID", strconv.FormatInt(otherID, 10))
	if strings.Count(one, "id=") != 1 || !strings.Contains(one, "id="+strconv.FormatInt(otherID, 10)+" ") {
		t.Errorf("CLIENT LIST ID %d: %q", otherID, one)
	}
	info := c.Do("CLIENT", "INFO")
	if !strings.Contains(info, "id="+strconv.FormatInt(id, 10)+" ") || !strings.Contains(info, " name=named ") {
		t.Errorf("CLIENT INFO: %q", info)
	}
}

func TestQuit(t *testing.T) {
	c, _, _ := start(t)
	if err := c.Write(append(redistest.Encode("QUIT"), redistest.Encode("SET", "k", "v")...)); err != nil {
		t.Fatal(err)
	}
	data, closed := c.ReadAll(5 * time.Second)
	if data != ok || !closed {
		t.Fatalf("QUIT: got %q closed=%v, want +OK and a close", data, closed)
	}
}

func TestAuthRequirepass(t *testing.T) {
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{RequirePass: "s3cret"})
	c := redistest.Dial(t, addr)
	wrongPass := errRe("WRONGPASS invalid username-password pair or user is disabled.")
	runSteps(t, c, []step{
		do(noAuth, "GET", "k"),
		do(noAuth, "PING"),
		do(noAuth, "SELECT", "1"),
		do(errRe("ERR unknown command 'NOSUCH', with args beginning with: "), "NOSUCH"), // lookup comes first
		do(arity("get"), "GET"),
		do(errRe("EXECABORT Transaction discarded because of: NOAUTH Authentication required."), "EXEC"),
		do(errRe("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"), "HELLO", "2"),
		do(wrongPass, "AUTH", "nope"),
		do(wrongPass, "AUTH", "default", "nope"),
		do(wrongPass, "HELLO", "2", "AUTH", "default", "nope"),
		do(noAuth, "GET", "k"),
		do(ok, "AUTH", "s3cret"),
		do(null, "GET", "k"),
		do(ok, "AUTH", "default", "s3cret"),
		do(simple("RESET"), "RESET"),
		do(noAuth, "GET", "k"), // RESET forgets the authentication
	})
	c2 := redistest.Dial(t, addr)
	reply := c2.Do("HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "via-hello")
	if !strings.HasPrefix(reply, "*14\r\n") {
		t.Fatalf("HELLO 2 AUTH: %q", reply)
	}
	mustDo(t, c2, bulk("via-hello"), "CLIENT", "GETNAME")
	mustDo(t, c2, ok, "SET", "k", "v")

	// Clearing the password lets unauthenticated clients in, as in Redis; a
	// client that connected without a password stays in when one is set.
	c3 := redistest.Dial(t, addr)
	mustDo(t, c3, noAuth, "GET", "k")
	mustDo(t, c2, ok, "CONFIG", "SET", "requirepass", "")
	mustDo(t, c3, bulk("v"), "GET", "k")
	c4 := redistest.Dial(t, addr)
	// A PING first: Dial returns once the kernel has the connection, and the
	// server may accept it after c2's CONFIG SET (seen once under load).
	mustDo(t, c4, simple("PONG"), "PING")
	mustDo(t, c2, ok, "CONFIG", "SET", "requirepass", "again")
	mustDo(t, c4, bulk("v"), "GET", "k")
	c5 := redistest.Dial(t, addr)
	mustDo(t, c5, noAuth, "GET", "k")
}
