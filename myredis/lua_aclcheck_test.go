package myredis

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestACLCheckCmd: redis.acl_check_cmd answers for the script's caller, and
// a command line of any length (it skips the arity check) never breaks the
// key extraction of any command.
func TestACLCheckCmd(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	require.Equal(t, "+OK\r\n", string(s.Do("ACL", "SETUSER", "bob", "on", ">pw", "+@all", "~x*", "&*")))
	c := newClient(s, nil)
	run := func(args ...string) string {
		var w Writer
		s.submit(func() { s.call(c, bargs(args...), &w) })
		return string(w.Bytes())
	}
	require.Equal(t, "+OK\r\n", run("AUTH", "bob", "pw"))
	check := "return redis.acl_check_cmd(unpack(ARGV))"
	assert.Equal(t, ":1\r\n", run("EVAL", check, "0", "set", "xa", "1"))
	assert.Equal(t, "$-1\r\n", run("EVAL", check, "0", "set", "ya", "1"), "key outside ~x*")
	assert.Equal(t, ":1\r\n", run("EVAL", check, "0", "set", "xa"), "no arity check")
	assert.Contains(t, run("EVAL", check, "0", "nosuch"), msgLuaACLInvalid)
	assert.Contains(t, run("EVAL", check, "0", "config", "nosuch"), msgLuaACLInvalid)
	assert.Equal(t, ":1\r\n", string(s.Do("EVAL", check, "0", "set", "ya", "1")), "the default user may")

	var names []string
	for name := range s.table {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for n := 0; n <= 4; n++ {
			args := append([]string{"EVAL", check, "0", name}, strings.Fields(strings.Repeat("xk ", n))...)
			got := run(args...)
			assert.NotContains(t, got, "runtime error", "%v", args[3:])
		}
	}
}
