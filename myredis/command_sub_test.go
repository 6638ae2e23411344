package myredis

import (
	"strings"
	"testing"
)

// TestSubcommandEntries: every subcommand of a container Redis documents has its
// COMMAND INFO and DOCS entry cut out of the container's, whole and named right.
func TestSubcommandEntries(t *testing.T) {
	found := 0
	for name, raw := range redisCommandInfo {
		_, i := respHeader(raw, 0)
		i = respSkip(raw, i, 9)
		n, i := respHeader(raw, i)
		for range n {
			end := respSkip(raw, i, 1)
			sub := entryName(raw, i)
			if !strings.HasPrefix(sub, name+"|") {
				t.Fatalf("%s: entry %q", name, sub)
			}
			info, types, ok := commandInfoEntry(sub)
			if !ok || info != raw[i:end] || entryName(info, 0) != sub || respSkip(info, 0, 1) != len(info) {
				t.Fatalf("COMMAND INFO %s: %q %v", sub, info, ok)
			}
			if len(types) != len(AggregateTypes(info)) || types[0] != '*' {
				t.Fatalf("COMMAND INFO %s: types %q for %q", sub, types, AggregateTypes(info))
			}
			docs, dtypes, ok := commandDocsEntry(sub)
			if !ok || respSkip(docs, 0, 1) != len(docs) || !strings.HasPrefix(docs, "*") || dtypes == "" || dtypes[0] != '%' {
				t.Fatalf("COMMAND DOCS %s: %q %q %v", sub, docs, dtypes, ok)
			}
			found++
			i = end
		}
	}
	if found < 90 { // 94 in Redis 7.0.15 (without CLUSTER and MODULE)
		t.Fatalf("only %d subcommands", found)
	}
	for _, name := range []string{"client|nope", "get|x", "nope|x", "client|list|x"} {
		if _, _, ok := commandInfoEntry(name); ok {
			t.Errorf("COMMAND INFO %s found", name)
		}
		if _, _, ok := commandDocsEntry(name); ok {
			t.Errorf("COMMAND DOCS %s found", name)
		}
	}
}
