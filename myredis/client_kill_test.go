package myredis_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"waitroom/myredis/redistest"
)

// clientID is CLIENT ID's number of c.
func killClientID(t *testing.T, c *redistest.Conn) string {
	reply := c.Do("CLIENT", "ID")
	require.True(t, strings.HasPrefix(reply, ":"), reply)
	return strings.TrimSpace(reply[1:])
}

// closedSoon reports whether the server closed c's connection.
func closedSoon(c *redistest.Conn) bool {
	_, closed := c.ReadAll(500 * time.Millisecond)
	return closed
}

func TestClientKill(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	a, b, d := redistest.Dial(t, addr), redistest.Dial(t, addr), redistest.Dial(t, addr)

	require.Equal(t, redistest.Int(1), a.Do("CLIENT", "KILL", "ID", killClientID(t, b)))
	require.True(t, closedSoon(b), "killed by ID")

	// the old form takes an address and may kill the caller
	local := d.NetConn().LocalAddr().String()
	require.Equal(t, redistest.Simple("OK"), a.Do("CLIENT", "KILL", local))
	require.True(t, closedSoon(d), "killed by ip:port")
	require.Equal(t, redistest.Err("ERR No such client"), a.Do("CLIENT", "KILL", local))

	// TYPE normal skips the caller unless SKIPME no
	e := redistest.Dial(t, addr)
	e.Do("PING")
	require.Equal(t, redistest.Int(1), a.Do("CLIENT", "KILL", "TYPE", "normal"))
	require.True(t, closedSoon(e))
	require.Equal(t, redistest.Int(1), a.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no"))
	require.True(t, closedSoon(a), "the caller is closed after its reply")

	f, g := redistest.Dial(t, addr), redistest.Dial(t, addr)
	require.Equal(t, redistest.Int(1), f.Do("CLIENT", "KILL", "LADDR", g.NetConn().RemoteAddr().String(),
		"ADDR", g.NetConn().LocalAddr().String(), "USER", "default", "ID", killClientID(t, g)))
	require.True(t, closedSoon(g), "every filter matched")
	id, _ := strconv.Atoi(killClientID(t, f))
	require.Equal(t, redistest.Int(0), f.Do("CLIENT", "KILL", "ID", strconv.Itoa(id), "TYPE", "pubsub"))
}

// CLIENT KILL TYPE master closes a replica's link; it reconnects.
func TestClientKillMasterLink(t *testing.T) {
	master := myRedisMaster(t)
	replica := redistest.StartMyRedis(t)
	h, p := replHostPort(t, master)
	c := redistest.Dial(t, replica)
	require.Equal(t, redistest.Simple("OK"), c.Do("REPLICAOF", h, p))
	waitSynced(t, master, replica)
	require.Equal(t, redistest.Int(1), c.Do("CLIENT", "KILL", "TYPE", "master"))
	waitSynced(t, master, replica)
	require.Equal(t, "1", infoField(t, master, "stats", "sync_partial_ok"), "the link came back with PSYNC +CONTINUE")
	require.Equal(t, redistest.Int(1), redistest.Dial(t, master).Do("CLIENT", "KILL", "TYPE", "replica"))
	waitSynced(t, master, replica)
}
