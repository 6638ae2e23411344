package myredis_test

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"waitroom/myredis/redistest"
)

// scriptError is the reply Redis 7.0 gives for an error raised at line of body.
func scriptError(body, msg string, line int) string {
	return "-" + msg + " script: " + sha1Hex(body) + ", on @user_script:" + strconv.Itoa(line) + ".\r\n"
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// send writes a command without waiting for its reply.
func send(t *testing.T, c *redistest.Conn, args ...string) {
	t.Helper()
	require.NoError(t, c.Write(redistest.Encode(args...)))
}

// receive reads one reply.
func receive(t *testing.T, c *redistest.Conn) string {
	t.Helper()
	r, err := c.Read()
	require.NoError(t, err)
	return r
}
