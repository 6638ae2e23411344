package myredis

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Importing Redis 7's multi-part AOF at start-up.
//
// Redis 7 keeps its AOF in a directory, appenddirname in dir (default
// "appendonlydir"): a manifest, <appendfilename>.manifest, lists a base file
// (<appendfilename>.<n>.base.rdb, or .base.aof with aof-use-rdb-preamble no),
// the incremental files written since (.<m>.incr.aof, in order) and history
// files (older ones, not loaded). MyRedis keeps one file, dir/appendfilename. An
// operator who stops Redis 7 and starts MyRedis on the same dir must not find an
// empty dataset, so with appendonly yes:
//
//   - MyRedis's own file exists: it is loaded as always; a manifest beside it is
//     ignored with a warning.
//   - Only the manifest exists: it is parsed as Redis's aofLoadManifestFromFile
//     parses it (parseManifest), every base and incr file it lists must exist,
//     then the base and the incr files are replayed in the manifest's order with
//     MyRedis's loader (an RDB file, or commands after an optional RDB preamble).
//     As in Redis, only the last file may end inside a command: its torn tail is
//     skipped with a warning (aof-load-truncated yes), elsewhere it stops
//     start-up. The data is then written to MyRedis's own file with the rewrite's
//     machinery (temp file, fsync, rename, directory fsync), and only then is the
//     directory renamed to <appenddirname>.imported-<unix time>. The user's files
//     are never changed or deleted: Redis truncates a torn last incr file, MyRedis
//     leaves it as it was, since it will not append to it.
//   - A bad manifest or a missing listed file stops start-up with an error naming
//     it; nothing is loaded, written or renamed.
//
// Why rename the directory: Redis 7 started later on this dir would otherwise
// load the stale manifest and ignore appendonly.aof, losing every write made
// under MyRedis. Its loadAppendOnlyFiles upgrades a lone appendonly.aof into its
// layout (aofUpgradePrepare: the file becomes the base of a new manifest) only
// when appenddirname does not exist, holds no manifest, or its manifest lists
// nothing but a base named appendfilename that is not in the directory; a
// manifest with a base and incr files, as this one, wins. With the directory
// renamed, the first case holds and Redis 7 picks up MyRedis's file.
//
// A crash before the rename leaves both MyRedis's file (complete: it is in place
// only once fsynced) and the manifest: the next start loads MyRedis's file and
// warns that the directory was ignored.
//
// The import runs in openAOF, before any client is served, with s.loading set
// throughout (no key expires between the load and the write).

// manifestMaxLine is Redis's MANIFEST_MAX_LINE: fgets reads at most this many
// bytes of a line at a time.
const manifestMaxLine = 1024

// aofManifest is a parsed manifest.
type aofManifest struct {
	base    *manifestFile
	incr    []manifestFile // in the manifest's order, their seqs increasing
	history []manifestFile
}

// manifestFile is one line of a manifest.
type manifestFile struct {
	name string
	seq  int64
	typ  byte // 'b' base, 'i' incr, 'h' history
}

// loadOrder is the files Redis loads: the base, then the incr files.
func (m *aofManifest) loadOrder() []manifestFile {
	var files []manifestFile
	if m.base != nil {
		files = append(files, *m.base)
	}
	return append(files, m.incr...)
}

// manifestError is a manifest Redis would refuse, with Redis's texts.
type manifestError struct {
	lineNum int    // 0: no line shown (Redis shows none for these)
	line    string // the line, trimmed, as Redis prints it after ">>>"
	msg     string // Redis's error text
}

func (e *manifestError) Error() string {
	if e.lineNum == 0 {
		return e.msg
	}
	return fmt.Sprintf("reading the manifest file, at line %d: >>> '%s': %s", e.lineNum, e.line, e.msg)
}

// Redis's texts for a bad manifest (aof.c, aofLoadManifestFromFile).
const (
	msgManifestEmpty    = "Found an empty AOF manifest"
	msgManifestLongLine = "The AOF manifest file contains too long line"
	msgManifestFormat   = "Invalid AOF manifest file format"
	msgManifestPath     = "File can't be a path, just a filename"
	msgManifestDupBase  = "Found duplicate base file information"
	msgManifestSeq      = "Found a non-monotonic sequence number"
	msgManifestType     = "Unknown AOF file type"
)

// parseManifest parses a manifest as Redis 7.0's aofLoadManifestFromFile does:
// lines are read as fgets reads them into a MANIFEST_MAX_LINE+1 buffer (a longer
// line is read in pieces), and seen as C strings (up to a NUL byte). A line
// starting with '#' is a comment; any other must end with '\n' (the last one
// too), is trimmed of " \t\r\n", must not be empty, and is split by sdssplitargs
// into an even number, at least 6, of words: key/value pairs in any order, keys
// "file", "seq" and "type" case-insensitive, others ignored, a repeated key's last
// value kept. The seq is read by atoll and must not be 0, the type is the value's
// first byte and the name must hold no '/' or '\'. An incr file's seq must be
// greater than every earlier incr file's. An empty file is an error, one of only
// comments is an empty manifest.
func parseManifest(data []byte) (*aofManifest, error) {
	m := &aofManifest{}
	var maxSeq int64
	lineNum := 0
	for {
		if len(data) == 0 {
			if lineNum == 0 {
				return nil, &manifestError{msg: msgManifestEmpty}
			}
			return m, nil
		}
		chunk := data[:min(len(data), manifestMaxLine)]
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			chunk = chunk[:i+1]
		}
		data = data[len(chunk):]
		lineNum++
		chunk = cString(chunk)
		if len(chunk) > 0 && chunk[0] == '#' {
			continue
		}
		if bytes.IndexByte(chunk, '\n') < 0 {
			return nil, &manifestError{msg: msgManifestLongLine}
		}
		line := bytes.Trim(chunk, " \t\r\n")
		bad := func(msg string) error { return &manifestError{lineNum, string(line), msg} }
		if len(line) == 0 {
			return nil, bad(msgManifestFormat)
		}
		args, ok := splitInline(line) // sdssplitargs (protoguard.go)
		if !ok || len(args) < 6 || len(args)%2 != 0 {
			return nil, bad(msgManifestFormat)
		}
		var f manifestFile
		named := false
		for i := 0; i < len(args); i += 2 {
			key, val := string(cString(args[i])), args[i+1]
			switch {
			case strings.EqualFold(key, "file"):
				f.name, named = string(cString(val)), true
				if strings.ContainsAny(f.name, `/\`) {
					return nil, bad(msgManifestPath)
				}
			case strings.EqualFold(key, "seq"):
				f.seq = atoll(cString(val))
			case strings.EqualFold(key, "type"):
				f.typ = 0
				if len(val) > 0 {
					f.typ = val[0]
				}
			}
		}
		if !named || f.seq == 0 || f.typ == 0 {
			return nil, bad(msgManifestFormat)
		}
		switch f.typ {
		case 'b':
			if m.base != nil {
				return nil, bad(msgManifestDupBase)
			}
			m.base = &f
		case 'h':
			m.history = append(m.history, f)
		case 'i':
			if f.seq <= maxSeq {
				return nil, bad(msgManifestSeq)
			}
			m.incr = append(m.incr, f)
			maxSeq = f.seq
		default:
			return nil, bad(msgManifestType)
		}
	}
}

// cString is b as C sees it: up to its first NUL byte.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// atoll is glibc's atoll (strtoll base 10): leading white space, a sign, the
// digits up to the first other byte; saturated at the int64 limits; 0 without
// digits.
func atoll(b []byte) int64 {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var n uint64
	over := false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			over = true
			continue
		}
		n = n*10 + d
	}
	switch {
	case neg && (over || n > 1<<63):
		return math.MinInt64
	case neg:
		return -int64(n)
	case over || n > math.MaxInt64:
		return math.MaxInt64
	}
	return int64(n)
}

// redis7Manifest returns the path of Redis 7's manifest when dir holds one and
// MyRedis's own file does not exist, "" otherwise; with both it warns that the
// directory is ignored. A manifest that cannot be looked at (permissions) stops
// start-up rather than start empty. Runs in openAOF.
func (a *aof) redis7Manifest() (string, error) {
	dirPath := filepath.Join(a.s.cfg.Dir, a.s.cfg.AppendDirname)
	path := filepath.Join(dirPath, a.s.cfg.AppendFilename+".manifest")
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR): // (appenddirname a file: Redis ignores it too)
		return "", nil
	case err != nil:
		return "", fmt.Errorf("aof: looking for Redis 7's AOF manifest: %w", err)
	case !info.Mode().IsRegular():
		return "", nil // Redis's fileExist: a regular file
	}
	if _, err := os.Stat(a.path); err == nil {
		a.s.log.Warn("both MyRedis's AOF and a Redis 7 AOF directory exist: loading MyRedis's file, "+
			"the directory is ignored (move it away to silence this)", "path", a.path, "ignored", dirPath)
		return "", nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("aof: %w", err)
	}
	return path, nil
}

// importRedis7 loads the Redis 7 AOF directory whose manifest is at manifest,
// writes MyRedis's file from the data, then renames the directory. Runs in
// openAOF, before the AOF is installed; the data is touched by executor jobs.
func (a *aof) importRedis7(manifest string) (loadStats, error) {
	s := a.s
	dirPath := filepath.Dir(manifest)
	fail := func(err error) (loadStats, error) {
		return loadStats{}, fmt.Errorf("aof: importing Redis 7's AOF directory %s: %w; "+
			"nothing was written or renamed", dirPath, err)
	}
	data, err := os.ReadFile(manifest)
	if err != nil {
		return fail(fmt.Errorf("can't open the AOF manifest file %s for reading: %w", manifest, err))
	}
	m, err := parseManifest(data)
	if err != nil {
		return fail(fmt.Errorf("bad AOF manifest %s: %w", manifest, err))
	}
	files := m.loadOrder()
	for _, f := range files { // as Redis, every listed file must exist before anything loads
		if _, err := os.Stat(filepath.Join(dirPath, f.name)); err != nil {
			return fail(fmt.Errorf("Unable to obtain the AOF file %s length. stat: %s", f.name, errnoText(err)))
		}
	}

	var total loadStats
	s.submit(func() {
		s.beginLoading() // until the file is written: nothing expires meanwhile (rdb_file.go)
		for i, f := range files {
			path := filepath.Join(dirPath, f.name)
			st, cut, lerr := a.replay(path)
			if lerr != nil {
				err = lerr
				return
			}
			total.keys += st.keys
			total.commands += st.commands
			if cut >= 0 {
				if i < len(files)-1 {
					err = fmt.Errorf("Fatal error: the truncated file is not the last file: %s ends inside "+
						"a command at offset %d", f.name, cut)
					return
				}
				s.log.Warn("aof import: the last file ends inside a command; loaded up to it, "+
					"as Redis's aof-load-truncated yes (the file is left as it is)",
					"file", path, "offset", cut, "bytes_skipped", st.size-cut)
			}
		}
	})
	defer s.submit(func() { s.loading = false })
	if err != nil {
		return fail(err)
	}

	size, err := a.writeImported()
	if err != nil {
		return fail(fmt.Errorf("writing %s: %w", a.path, err))
	}
	moved, err := renameAside(dirPath)
	if err != nil {
		return loadStats{}, fmt.Errorf("aof: imported Redis 7's AOF directory %s into %s, but could not "+
			"rename the directory (%w): move it away, or Redis 7 started on this dir would load it "+
			"instead of %s", dirPath, a.path, err, a.s.cfg.AppendFilename)
	}
	base := ""
	if m.base != nil {
		base = m.base.name
	}
	s.log.Warn("imported Redis 7's multi-part AOF: loaded its base and incr files, wrote MyRedis's own AOF "+
		"and renamed the directory (kept as it was)", "manifest", manifest, "base", base,
		"incr_files", len(m.incr), "rdb_keys", total.keys, "commands", total.commands,
		"aof", a.path, "directory_moved_to", moved)
	total.size = size
	return total, nil
}

// writeImported writes the data to MyRedis's file through a temp file, fsynced
// and renamed, the directory fsynced, and returns its size. Runs in openAOF;
// each access to the data is an executor job.
func (a *aof) writeImported() (int64, error) {
	tmp := filepath.Join(filepath.Dir(a.path), rewriteTempName())
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) {
		f.Close()
		os.Remove(tmp)
		return 0, err
	}
	var rw *rewrite
	a.s.submit(func() { rw = a.s.newRewrite() })
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := a.writeSnapshot(rw, bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	info, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	if err := os.Rename(tmp, a.path); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	syncDir(filepath.Dir(a.path))
	return info.Size(), nil
}

// renameAside renames dir to <dir>.imported-<unix time> (with -2, -3... if that
// is taken) and fsyncs its parent. It returns the new path.
func renameAside(dir string) (string, error) {
	to := fmt.Sprintf("%s.imported-%d", dir, time.Now().Unix())
	for n := 2; ; n++ {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s.imported-%d-%d", dir, time.Now().Unix(), n)
	}
	if err := os.Rename(dir, to); err != nil {
		return "", err
	}
	syncDir(filepath.Dir(dir))
	return to, nil
}
