package myredis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// mustPrefix checks that one reply starts with want.
func mustPrefix(t *testing.T, c *redistest.Conn, want string, args ...string) {
	t.Helper()
	if got := c.Do(args...); !strings.HasPrefix(got, want) {
		t.Fatalf("%q: got %q, want %q...", args, got, want)
	}
}

func TestACLFileSaveAndLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	os.WriteFile(file, []byte("user alice on >pw ~k* +get\nuser default on nopass ~* &* +@all\n"), 0o644)
	cfg := myredis.DefaultConfig()
	cfg.ACL.File = file
	s, addr := redistest.StartMyRedisConfig(t, cfg)
	_ = s
	c := redistest.Dial(t, addr)
	if got := c.Do("ACL", "USERS"); got != redistest.Array(redistest.Bulk("alice"), redistest.Bulk("default")) {
		t.Fatalf("users from the file: %q", got)
	}
	mustDo(t, c, ok, "ACL", "SETUSER", "bob", "on", "nopass", "+ping")
	mustDo(t, c, ok, "ACL", "SAVE")
	data, _ := os.ReadFile(file)
	want := "user alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~k* resetchannels -@all +get\n" +
		"user bob on nopass resetchannels -@all +ping\nuser default on nopass ~* &* +@all\n"
	if string(data) != want {
		t.Fatalf("saved file:\n%s\nwant:\n%s", data, want)
	}
	mustDo(t, c, redistest.Int(1), "ACL", "DELUSER", "bob")
	mustDo(t, c, ok, "ACL", "LOAD")
	if got := c.Do("ACL", "USERS"); !strings.Contains(got, "bob") {
		t.Fatalf("LOAD did not bring bob back: %q", got)
	}
	// a bad file changes nothing and says why
	os.WriteFile(file, []byte("user carol on +nosuch\nnotuser x\n"), 0o644)
	got := c.Do("ACL", "LOAD")
	wantErr := "-ERR " + file + ":1: Error in applying operation '+nosuch': Unknown command or category name in ACL. " +
		file + ":2 should start with user keyword followed by the username. WARNING: ACL errors detected, no change to the previously active ACL rules was performed\r\n"
	if got != wantErr {
		t.Fatalf("bad file:\n got %q\nwant %q", got, wantErr)
	}
	if got := c.Do("ACL", "USERS"); strings.Contains(got, "carol") || !strings.Contains(got, "bob") {
		t.Fatalf("a failed LOAD changed the users: %q", got)
	}
}

func TestACLConfigUsersAndRequirepass(t *testing.T) {
	cfg, err := myredis.ParseArgs([]string{"--user", "ann", "on", ">pw", "+@all", "~*", "--requirepass", "rp"})
	if err != nil {
		t.Fatal(err)
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	c := redistest.Dial(t, addr)
	mustPrefix(t, c, "-NOAUTH", "GET", "x")
	mustDo(t, c, ok, "AUTH", "ann", "pw")
	mustDo(t, c, redistest.Bulk("ann"), "ACL", "WHOAMI")
	mustDo(t, c, ok, "AUTH", "rp")
	mustDo(t, c, redistest.Bulk("default"), "ACL", "WHOAMI")
	mustDo(t, c, ok, "CONFIG", "SET", "requirepass", "other")
	c2 := redistest.Dial(t, addr)
	mustPrefix(t, c2, "-WRONGPASS", "AUTH", "rp")
	mustDo(t, c2, ok, "AUTH", "other")
}

func TestACLDeletedUserIsDisconnected(t *testing.T) {
	_, addr := redistest.StartMyRedisConfig(t, myredis.DefaultConfig())
	admin := redistest.Dial(t, addr)
	mustDo(t, admin, ok, "ACL", "SETUSER", "gone", "on", "nopass", "+@all", "~*")
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "AUTH", "gone", "x")
	mustDo(t, admin, redistest.Int(1), "ACL", "DELUSER", "gone")
	if _, closed := c.ReadAll(5 * time.Second); !closed {
		t.Fatal("the client of a deleted user is still connected")
	}
	// a client deleting its own user gets the reply, then the close
	self := redistest.Dial(t, addr)
	mustDo(t, admin, ok, "ACL", "SETUSER", "me", "on", "nopass", "+@all", "~*")
	mustDo(t, self, ok, "AUTH", "me", "x")
	if err := self.Write(redistest.Encode("ACL", "DELUSER", "me")); err != nil {
		t.Fatal(err)
	}
	data, closed := self.ReadAll(5 * time.Second)
	if data != redistest.Int(1) || !closed {
		t.Fatalf("self DELUSER: %q closed=%v", data, closed)
	}
}

func TestACLSubscriberLosingChannelIsDisconnected(t *testing.T) {
	_, addr := redistest.StartMyRedisConfig(t, myredis.DefaultConfig())
	admin := redistest.Dial(t, addr)
	mustDo(t, admin, ok, "ACL", "SETUSER", "sub", "on", "nopass", "+@all", "~*", "&news", "&sport")
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "AUTH", "sub", "x")
	c.Do("SUBSCRIBE", "news")
	mustDo(t, admin, ok, "ACL", "SETUSER", "sub", "&other") // still has news: stays
	if data, closed := c.ReadAll(300 * time.Millisecond); closed {
		t.Fatalf("subscriber closed though news is still allowed (%q)", data)
	}
	mustDo(t, admin, ok, "ACL", "SETUSER", "sub", "resetchannels", "&sport")
	if _, closed := c.ReadAll(5 * time.Second); !closed {
		t.Fatal("subscriber to a channel no longer allowed is still connected")
	}
}
