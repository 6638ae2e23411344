package myredis

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// streamState describes every stream of db 0 completely: entries, IDs and
// counters, groups, consumers and pending entries (times included).
func streamState(s *Server) string {
	var b strings.Builder
	s.submit(func() {
		db := s.dbs[0]
		var keys []string
		db.each(func(k string, e *entry) {
			if _, ok := e.value().(*stream); ok {
				keys = append(keys, k)
			}
		})
		sortStringsForTest(keys)
		for _, k := range keys {
			st := db.entry(k).value().(*stream)
			fmt.Fprintf(&b, "%s len=%d last=%v first=%v maxdel=%v added=%d\n", k, st.length, st.lastID,
				st.firstID, st.maxDeletedID, st.entriesAdded)
			for _, e := range streamEntries(st, false) {
				fmt.Fprintf(&b, "  %s\n", e)
			}
			for _, g := range st.sortedGroups() {
				fmt.Fprintf(&b, "  group %s last=%v read=%d pel=%d\n", g.name, g.lastID, g.entriesRead, g.pel.Len())
				for _, name := range g.consumerNames() {
					c := g.consumers[name]
					fmt.Fprintf(&b, "    consumer %s\n", name)
					c.pel.Scan(func(p *pendingEntry) bool {
						fmt.Fprintf(&b, "      %v t=%d n=%d\n", p.id, p.deliveryTime, p.deliveryCount)
						return true
					})
				}
			}
		}
	})
	return b.String()
}

func sortStringsForTest(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// streamWorkload writes streams with every kind of change the AOF must carry.
func streamWorkload(t *testing.T, c *aofClient) {
	for i := 1; i <= 30; i++ {
		c.must(t, "XADD", "s", fmt.Sprintf("%d-1", i), "f", i, "g", "x")
	}
	c.must(t, "XADD", "s", "MAXLEN", "~", 5, "31-*", "auto", "id")
	c.must(t, "XADD", "s", "40-*", "seq", "auto")
	c.must(t, "XDEL", "s", "40-0")
	c.must(t, "XTRIM", "s", "MINID", "25")
	c.must(t, "XGROUP", "CREATE", "s", "g", "0")
	c.must(t, "XGROUP", "CREATE", "s", "late", "$", "ENTRIESREAD", 3)
	c.must(t, "XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "s", ">")
	c.must(t, "XREADGROUP", "GROUP", "g", "bob", "COUNT", 1, "NOACK", "STREAMS", "s", ">")
	c.must(t, "XREADGROUP", "GROUP", "g", "carol", "COUNT", 2, "STREAMS", "s", ">")
	c.must(t, "XACK", "s", "g", "26-1")
	c.must(t, "XCLAIM", "s", "g", "dave", 0, "25-1", "TIME", 12345, "RETRYCOUNT", 9)
	c.must(t, "XAUTOCLAIM", "s", "g", "erin", 0, "0", "COUNT", 1)
	c.must(t, "XGROUP", "CREATECONSUMER", "s", "g", "idle")
	c.must(t, "XGROUP", "DELCONSUMER", "s", "g", "bob")
	c.must(t, "XGROUP", "SETID", "s", "late", "27-1", "ENTRIESREAD", 7)
	c.must(t, "XADD", "empty", "MAXLEN", 0, "5-5", "a", "b")
	c.must(t, "XSETID", "empty", "9-9", "ENTRIESADDED", 12, "MAXDELETEDID", "8-8")
	c.must(t, "XGROUP", "CREATE", "gone", "g", "$", "MKSTREAM")
	c.must(t, "XGROUP", "DESTROY", "gone", "g")
}

// TestAOFStreamsReplayAndRewrite: a stream's entries, IDs, counters, groups,
// consumers and pending entries come back the same from the log of its commands
// and from a rewritten file.
func TestAOFStreamsReplayAndRewrite(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	streamWorkload(t, c)
	want := streamState(s)
	if !strings.Contains(want, "consumer dave") || !strings.Contains(want, "group late last=27-1 read=7") {
		t.Fatalf("workload did not build the state it means to:\n%s", want)
	}
	s.Close()

	s2, addr2 := openAOFServer(t, dir, noPreamble) // the command encoding
	if got := streamState(s2); got != want {
		t.Fatalf("after replay:\n%s\nwant:\n%s", got, want)
	}
	c2 := mustDialAOF(t, addr2)
	c2.must(t, "BGREWRITEAOF")
	c2.waitRewrite(t, 1)
	s2.Close()
	b, _ := os.ReadFile(aofPath(dir))
	if !bytes.Contains(b, []byte("XSETID")) || !bytes.Contains(b, []byte("CREATECONSUMER")) ||
		bytes.Contains(b, []byte("XREADGROUP")) || bytes.Contains(b, []byte("DESTROY")) {
		t.Fatalf("the rewritten file is not a stream rewrite:\n%s", b)
	}

	s3, _ := openAOFServer(t, dir, nil)
	defer s3.Close()
	if got := streamState(s3); got != want {
		t.Fatalf("after rewrite:\n%s\nwant:\n%s", got, want)
	}
}
