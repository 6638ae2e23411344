package myredis

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain fails the run when a test left a server's file (dump.rdb, an AOF, a
// temporary RDB) in the package directory: a test's server writes under its
// t.TempDir() (redistest.StartMyRedisConfig gives one to a Config without Dir).
func TestMain(m *testing.M) {
	before := strayFiles()
	code := m.Run()
	for f := range strayFiles() {
		if !before[f] {
			fmt.Fprintf(os.Stderr, "FAIL: a test left %s in the package directory; give its server a t.TempDir()\n", f)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

func strayFiles() map[string]bool {
	found := map[string]bool{}
	for _, pattern := range []string{"*.rdb", "*.aof", "appendonlydir"} {
		names, _ := filepath.Glob(pattern)
		for _, n := range names {
			found[n] = true
		}
	}
	return found
}
