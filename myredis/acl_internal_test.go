package myredis

import (
	"strings"
	"testing"
)

// aclDo runs one command as client c on s's executor and returns the reply.
func aclDo(s *Server, c *Client, args ...string) string {
	var w Writer
	s.submit(func() { s.call(c, argv(args...), &w) })
	return string(w.Bytes())
}

func TestACLDefaultUserIsUnrestricted(t *testing.T) {
	s := New(DefaultConfig())
	defer s.Close()
	c := newClient(s, nil)
	if c.user != s.acl.dflt || !c.user.unrestricted {
		t.Fatalf("a new client is not the unrestricted default user: %+v", c.user)
	}
	if got := aclDo(s, c, "ACL", "SETUSER", "default", "-get"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if c.user.unrestricted {
		t.Fatal("default -get is still unrestricted")
	}
	want := "-NOPERM this user has no permissions to run the 'get' command\r\n"
	if got := aclDo(s, c, "GET", "k"); got != want {
		t.Fatalf("GET after -get: %q", got)
	}
	aclDo(s, c, "ACL", "SETUSER", "default", "+get")
	if !c.user.unrestricted {
		t.Fatal("default +get is not unrestricted again")
	}
	if got := aclDo(s, c, "GET", "k"); got != "$-1\r\n" {
		t.Fatalf("GET: %q", got)
	}
}

func TestACLKeyPermissionsReadWrite(t *testing.T) {
	s := New(DefaultConfig())
	defer s.Close()
	admin := newClient(s, nil)
	aclDo(s, admin, "ACL", "SETUSER", "rw", "on", "nopass", "+@all", "%R~r*", "%W~w*", "~both*")
	c := newClient(s, nil)
	if got := aclDo(s, c, "AUTH", "rw", "x"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	denied := "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"GET", "r1"}, "$-1\r\n"},
		{[]string{"SET", "r1", "v"}, denied},
		{[]string{"SET", "w1", "v"}, "+OK\r\n"},
		{[]string{"GET", "w1"}, denied},
		{[]string{"SET", "both1", "v"}, "+OK\r\n"},
		{[]string{"COPY", "both1", "w2"}, ":1\r\n"},             // reads both1, writes w2
		{[]string{"COPY", "w2", "both3"}, denied},               // w2 cannot be read
		{[]string{"LMOVE", "r1", "w3", "LEFT", "LEFT"}, denied}, // r1 is written (popped)
	} {
		if got := aclDo(s, c, tc.args...); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestACLLogCountsAndGroups(t *testing.T) {
	s := New(DefaultConfig())
	defer s.Close()
	admin := newClient(s, nil)
	aclDo(s, admin, "ACL", "SETUSER", "lg", "on", "nopass", "+get", "~a")
	c := newClient(s, nil)
	aclDo(s, c, "AUTH", "lg", "x")
	for range 3 {
		aclDo(s, c, "GET", "b")
	}
	aclDo(s, c, "SET", "a", "1")
	aclDo(s, c, "AUTH", "lg", "x") // fine
	aclDo(s, c, "AUTH", "nosuch", "x")
	log := s.acl.log
	if len(log) != 3 {
		t.Fatalf("log has %d entries, want 3", len(log))
	}
	if e := log[0]; e.reason != aclDeniedAuth || e.object != "AUTH" || e.username != "nosuch" {
		t.Errorf("newest entry %+v, want the failed AUTH", e)
	}
	if e := log[1]; e.reason != aclDeniedCmd || e.object != "set" {
		t.Errorf("second entry %+v, want the denied SET", e)
	}
	if e := log[2]; e.reason != aclDeniedKey || e.object != "b" || e.count != 3 {
		t.Errorf("third entry %+v, want key b three times", e)
	}
	aclDo(s, admin, "CONFIG", "SET", "acllog-max-len", "1")
	aclDo(s, c, "GET", "zz")
	if len(s.acl.log) != 1 {
		t.Fatalf("acllog-max-len 1 keeps %d entries", len(s.acl.log))
	}
}

func TestACLDescribeRoundTrips(t *testing.T) {
	s := New(DefaultConfig())
	defer s.Close()
	a := s.acl
	for _, rules := range [][]string{
		{"on", ">p", "~a*", "%R~b", "&c", "+@all", "-@dangerous", "+flushall"},
		{"-@all", "+@read", "-get", "+select|0", "+client|id", "(~x +set)", "(%W~y allchannels +@write)"},
		{"nopass", "allcommands", "-client", "+client|list"},
	} {
		u, msg := a.setUserRules(nil, "rt", rules)
		if msg != "" {
			t.Fatalf("%q: %s", rules, msg)
		}
		descr := a.describeUser(u)
		again, msg := a.setUserRules(nil, "rt", splitSpaces(descr))
		if msg != "" {
			t.Fatalf("re-reading %q: %s", descr, msg)
		}
		if got := a.describeUser(again); got != descr {
			t.Errorf("%q described as %q, read back as %q", rules, descr, got)
		}
	}
}

// FuzzACLRules: any rules either fail with Redis's error or make a user whose
// description reads back to the same user; nothing panics.
func FuzzACLRules(f *testing.F) {
	for _, seed := range []string{"on >p ~a* %R~b &c +@all -@dangerous", "(~x +get) (%W~y", "+select|0 -client +client|id",
		"#0000000000000000000000000000000000000000000000000000000000000000", "%RW~x allkeys ~y", "reset nopass allchannels &x", "( )", "(", "%"} {
		f.Add(seed)
	}
	s := New(DefaultConfig())
	defer s.Close()
	f.Fuzz(func(t *testing.T, in string) {
		rules := strings.Fields(in)
		done := make(chan struct{})
		s.jobs <- job{fn: func() {
			defer close(done)
			u, msg := s.acl.setUserRules(nil, "fz", rules)
			if msg != "" {
				if !strings.HasPrefix(msg, "ERR ") {
					t.Errorf("%q: error %q", rules, msg)
				}
				return
			}
			descr := s.acl.describeUser(u)
			again, msg := s.acl.setUserRules(nil, "fz", splitSpaces(descr))
			if msg != "" {
				t.Fatalf("%q described as %q, which does not read back: %s", rules, descr, msg)
			}
			if got := s.acl.describeUser(again); got != descr {
				t.Fatalf("%q: %q read back as %q", rules, descr, got)
			}
		}}
		<-done
	})
}

// FuzzACLFile: an ACL file either loads or gives Redis's errors; nothing panics.
func FuzzACLFile(f *testing.F) {
	f.Add("user a on >p ~* +@all\nuser b off\n")
	f.Add("user default on nopass (~x +get)\n\nuser  c  on\n")
	f.Add("user a +nosuch\nuser a\nx\n")
	s := New(DefaultConfig())
	defer s.Close()
	f.Fuzz(func(t *testing.T, text string) {
		done := make(chan struct{})
		s.jobs <- job{fn: func() {
			defer close(done)
			users, errs := s.acl.parseACLFile(text, "f.acl")
			if errs != "" {
				return
			}
			for name, u := range users {
				if u.name != name || len(u.selectors) == 0 || !u.selectors[0].root {
					t.Fatalf("user %q loaded as %+v", name, u)
				}
			}
		}}
		<-done
	})
}
