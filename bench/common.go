package bench

import (
	"os"
	"slices"
	"strings"
	"time"
)

// newReport starts a report for scenario with its parameters and this machine.
func newReport(scenario string, params any) *Report {
	return &Report{
		Scenario: scenario,
		Command:  commandLine(),
		Started:  time.Now(),
		Machine:  ThisMachine(),
		Params:   params,
	}
}

// finish stamps the elapsed time.
func (r *Report) finish() *Report {
	r.Elapsed = Duration(time.Since(r.Started).Round(time.Millisecond))
	return r
}

// commandLine is how this process was started, for the report.
func commandLine() string {
	args := slices.Clone(os.Args)
	if len(args) > 0 {
		if i := strings.LastIndex(args[0], "/"); i >= 0 && !strings.HasSuffix(args[0], ".test") {
			args[0] = "bin/" + args[0][i+1:]
		}
	}
	return strings.Join(args, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
