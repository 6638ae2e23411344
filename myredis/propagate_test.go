package myredis

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPropagationUnits: what one command propagates is handed over when it
// ends, several writes wrapped, one alone as it is, as Redis 7.0's
// propagatePendingCommands (the replication stream's forms are compared with
// real Redis in replication_stream_compat_test.go).
func TestPropagationUnits(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	var log propagationLog
	log.attach(s)
	c := newClient(s, nil)
	c.authed = true
	run := func(args ...string) {
		var w Writer
		s.submit(func() { s.call(c, bargs(args...), &w) })
	}
	run("MULTI")
	run("SET", "a", "1")
	run("EXEC")
	assert.Equal(t, []string{"SET a 1"}, log.take(), "one write in MULTI: no wrap")
	run("MULTI")
	run("SET", "a", "2")
	run("INCR", "n")
	run("EXEC")
	assert.Equal(t, []string{"BEGIN", "SET a 2", "INCR n", "END"}, log.take())
	run("MULTI")
	run("GET", "a")
	run("EXEC")
	assert.Empty(t, log.take(), "a read-only transaction propagates nothing")
	run("PUBLISH", "ch", "m")
	assert.Empty(t, log.take(), "PUBLISH goes to replicas only, and there are none")
}

// TestPublishNeverInTheAOF: PUBLISH is for the replicas; the AOF does not keep
// it, and a transaction of one write plus a PUBLISH is one write to the file.
func TestPublishNeverInTheAOF(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	c.must(t, "PUBLISH", "ch", "m")
	c.must(t, "MULTI")
	c.must(t, "PUBLISH", "ch", "m")
	c.must(t, "SET", "k", "v")
	c.must(t, "EXEC")
	s.Close()
	got, err := os.ReadFile(aofPath(dir))
	require.NoError(t, err)
	want := appendCommand(appendCommand(nil, bargs("SELECT", "0")), bargs("SET", "k", "v"))
	assert.Equal(t, string(want), string(got))
}
