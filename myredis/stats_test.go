package myredis_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// TestInfoForRedisExporter scrapes INFO as oliver006/redis_exporter does and
// checks every field its stock Grafana dashboard's panels are built from: uptime,
// clients, memory used and max, commands processed, hits and misses, expired and
// evicted keys, keys per db, network in and out, and per-command calls.
func TestInfoForRedisExporter(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", "100gb") // the test process's heap is shared by every in-process server
	mustDo(t, c, ok, "SET", "k", "v")
	mustDo(t, c, num(1), "EXPIRE", "k", "100")
	mustDo(t, c, ok, "SET", "k2", "v")
	mustDo(t, c, bulk("v"), "GET", "k2")
	mustDo(t, c, null, "GET", "missing")
	f := infoFields(t, c.Do("INFO", "ALL"))
	numeric := regexp.MustCompile(`^\d+(\.\d+)?$`)
	for _, name := range []string{
		"uptime_in_seconds", "connected_clients", "blocked_clients", "used_memory", "used_memory_rss",
		"used_memory_peak", "maxmemory", "mem_fragmentation_ratio", "total_commands_processed",
		"instantaneous_ops_per_sec", "total_connections_received", "total_net_input_bytes",
		"total_net_output_bytes", "instantaneous_input_kbps", "instantaneous_output_kbps",
		"rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses",
		"total_error_replies",
	} {
		if !numeric.MatchString(f[name]) {
			t.Errorf("INFO %s = %q, want a number", name, f[name])
		}
	}
	checks := map[string]string{
		"maxmemory": "107374182400", "keyspace_hits": "1", "keyspace_misses": "1", "evicted_keys": "0",
		"db0": "keys=2,expires=1,avg_ttl=0", "maxmemory_policy": "noeviction",
	}
	for name, want := range checks {
		if f[name] != want {
			t.Errorf("INFO %s = %q, want %q", name, f[name], want)
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(f["run_id"]) {
		t.Errorf("run_id %q", f["run_id"])
	}
	for name, min := range map[string]int64{"used_memory_rss": 1 << 20, "used_memory_peak": 1, "total_net_input_bytes": 50, "total_net_output_bytes": 20} {
		if n, _ := strconv.ParseInt(f[name], 10, 64); n < min {
			t.Errorf("INFO %s = %d, want at least %d", name, n, min)
		}
	}
	if peak, used := atoi(f["used_memory_peak"]), atoi(f["used_memory"]); peak < used {
		t.Errorf("used_memory_peak %d below used_memory %d", peak, used)
	}
	for _, want := range []string{"cmdstat_set:calls=2,", "cmdstat_get:calls=2,", "cmdstat_config|set:calls=1,"} {
		if !strings.Contains(c.Do("INFO", "commandstats"), want) {
			t.Errorf("INFO commandstats lacks %q", want)
		}
	}
}

func atoi(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

// TestInfoStatsSections: the per-command sections' line formats, section
// selection, and CONFIG RESETSTAT.
func TestInfoStatsSections(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "SET", "k", "v")
	c.Do("INCR", "k")
	c.Do("GET")
	cmdstat := regexp.MustCompile(`^cmdstat_[a-z|]+:calls=\d+,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=\d+,failed_calls=\d+$`)
	latency := regexp.MustCompile(`^latency_percentiles_usec_[a-z|]+:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$`)
	errstat := regexp.MustCompile(`^errorstat_[A-Z]+:count=\d+$`)
	for section, re := range map[string]*regexp.Regexp{"commandstats": cmdstat, "latencystats": latency, "errorstats": errstat} {
		lines := infoLines(c.Do("INFO", section))
		if len(lines) == 0 {
			t.Errorf("INFO %s is empty", section)
		}
		for _, l := range lines {
			if !re.MatchString(l) {
				t.Errorf("INFO %s line %q", section, l)
			}
		}
	}
	f := infoFields(t, c.Do("INFO", "everything"))
	if f["cmdstat_incr"] != "" && !strings.HasSuffix(f["cmdstat_incr"], "rejected_calls=0,failed_calls=1") {
		t.Errorf("cmdstat_incr %q", f["cmdstat_incr"])
	}
	if f["cmdstat_get"] == "" || !strings.HasPrefix(f["cmdstat_get"], "calls=0,") || !strings.HasSuffix(f["cmdstat_get"], "rejected_calls=1,failed_calls=0") {
		t.Errorf("cmdstat_get %q", f["cmdstat_get"])
	}
	if f["errorstat_ERR"] != "count=2" || f["total_error_replies"] != "2" {
		t.Errorf("errorstat_ERR %q, total_error_replies %q", f["errorstat_ERR"], f["total_error_replies"])
	}
	if d := infoFields(t, c.Do("INFO")); d["cmdstat_set"] != "" || d["errorstat_ERR"] == "" {
		t.Errorf("default INFO: commandstats shown %v, errorstats missing %v", d["cmdstat_set"] != "", d["errorstat_ERR"] == "")
	}
	mustDo(t, c, ok, "CONFIG", "RESETSTAT")
	f = infoFields(t, c.Do("INFO", "everything"))
	for _, name := range []string{"cmdstat_set", "cmdstat_incr", "errorstat_ERR", "latency_percentiles_usec_set"} {
		if f[name] != "" {
			t.Errorf("after CONFIG RESETSTAT %s = %q", name, f[name])
		}
	}
	if f["total_error_replies"] != "0" {
		t.Errorf("after CONFIG RESETSTAT total_error_replies = %q", f["total_error_replies"])
	}
}

func infoLines(reply string) []string {
	var out []string
	for _, l := range strings.Split(reply, "\r\n") {
		if strings.Contains(l, ":") && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestInstantaneousOps: the sampled rate becomes non-zero under a steady load.
func TestInstantaneousOps(t *testing.T) {
	c, _, _ := start(t)
	for end := time.Now().Add(5 * time.Second); ; {
		for i := 0; i < 50; i++ {
			c.Do("PING")
		}
		if infoFields(t, c.Do("INFO", "stats"))["instantaneous_ops_per_sec"] != "0" {
			return
		}
		if time.Now().After(end) {
			t.Fatal("instantaneous_ops_per_sec stayed 0")
		}
	}
}

// TestClientListCounters: fd is the socket's descriptor, qbuf what a blocked
// client sent and is not yet parsed, tot-mem more than nothing.
func TestClientListCounters(t *testing.T) {
	c, _, addr := start(t)
	blocked := redistest.Dial(t, addr)
	if err := blocked.Write(redistest.Encode("BZPOPMIN", "q", "0")); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, c, "blocked_clients", "1")
	pending := redistest.Encode("ECHO", strings.Repeat("x", 1000))
	if err := blocked.Write(pending); err != nil {
		t.Fatal(err)
	}
	field := regexp.MustCompile(`\b(fd|qbuf|omem|tot-mem|flags)=(\S+)`)
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		list := c.Do("CLIENT", "LIST")
		var blockedLine string
		fds := map[string]bool{}
		for _, l := range strings.Split(list, "\n") {
			if strings.Contains(l, "flags=b") {
				blockedLine = l
			}
			for _, m := range field.FindAllStringSubmatch(l, -1) {
				if m[1] == "fd" {
					fds[m[2]] = true
					if n, err := strconv.Atoi(m[2]); err != nil || n < 3 {
						t.Fatalf("fd=%s in %q", m[2], l)
					}
				}
				if m[1] == "tot-mem" && atoi(m[2]) <= 0 {
					t.Fatalf("tot-mem=%s in %q", m[2], l)
				}
			}
		}
		if len(fds) != 2 {
			t.Fatalf("two clients, fds %v", fds)
		}
		if strings.Contains(blockedLine, " qbuf="+strconv.Itoa(len(pending))+" ") {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("blocked client's qbuf never showed %d pending bytes: %q", len(pending), blockedLine)
		}
	}
}
