package myredis

import (
	"debug/elf"
	"fmt"
	"hash/fnv"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// What INFO server says about the binary and the process, computed once.
//
//   - redis_git_sha1, redis_git_dirty: the MyRedis commit the binary was built
//     from and whether the tree had changes (Go's vcs.revision and
//     vcs.modified); "00000000" and 0 when the build recorded none (go build
//     -buildvcs=false, a tree outside git), as Redis built outside git.
//   - redis_build_id: an id of this very binary: a 64-bit hash of the Go build
//     ID the linker wrote into it (the ELF note .note.go.buildid, which changes
//     with any change of code, toolchain or flags), else of the module build
//     information. Stable across starts of one binary, as Redis's.
//   - executable, config_file: Redis's getAbsolutePath of argv[0] and of the
//     config file argument, relative to the directory the process started in.

type buildFacts struct {
	sha1  string
	dirty int
	id    string
}

var buildInfoOnce = sync.OnceValue(func() buildFacts {
	f := buildFacts{sha1: "00000000"}
	src := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		src = bi.String()
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				f.sha1 = kv.Value[:min(8, len(kv.Value))] // Redis's mkreleasehdr.sh keeps 8 digits
			case "vcs.modified":
				if kv.Value == "true" {
					f.dirty = 1
				}
			}
		}
	}
	if id := goBuildID(); id != "" {
		src = id
	}
	h := fnv.New64a()
	h.Write([]byte(src))
	f.id = fmt.Sprintf("%x", h.Sum64())
	return f
})

// goBuildID reads the Go build ID from the running binary's ELF note, "" where
// there is none (not ELF, no such note, the file unreadable).
func goBuildID() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	ef, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer ef.Close()
	sec := ef.Section(".note.go.buildid")
	if sec == nil {
		return ""
	}
	data, err := sec.Data()
	if err != nil || len(data) < 16 {
		return ""
	}
	// the note: namesz, descsz, type (4 bytes each), "Go\0\0", then the ID
	n := int(ef.ByteOrder.Uint32(data[4:8]))
	return string(data[16 : 16+min(n, len(data)-16)])
}

// startDir is the working directory when the process started (before a
// daemonize or a CONFIG SET dir could change it), for getAbsolutePath.
var startDir, _ = os.Getwd()

// executablePath is INFO's executable: argv[0] made absolute as Redis makes it
// (relative to the starting directory, not looked up in PATH).
var executablePath = redisAbsolutePath(os.Args[0])

// redisAbsolutePath is Redis's getAbsolutePath: a path starting with "/" as it
// is, else the starting directory, "/", and the path, each leading "../"
// taking one directory off; "" when the directory is unknown.
func redisAbsolutePath(name string) string {
	rel := strings.Trim(name, " \r\n\t")
	if strings.HasPrefix(rel, "/") {
		return rel
	}
	if startDir == "" {
		return ""
	}
	abs := startDir
	if !strings.HasSuffix(abs, "/") {
		abs += "/"
	}
	for strings.HasPrefix(rel, "../") {
		rel = rel[3:]
		if len(abs) > 1 {
			abs = abs[:strings.LastIndexByte(abs[:len(abs)-1], '/')+1]
		}
	}
	return abs + rel
}

// multiplexingAPI names the readiness mechanism under Go's network poller on
// this system, with Redis's names for the same system calls.
func multiplexingAPI() string {
	switch runtime.GOOS {
	case "linux", "android":
		return "epoll"
	case "darwin", "ios", "freebsd", "netbsd", "openbsd", "dragonfly":
		return "kqueue"
	case "solaris", "illumos":
		return "evport"
	case "windows":
		return "iocp"
	}
	return "poll"
}
