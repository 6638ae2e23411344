package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// CPU pinning: the notes' caveat was that the load generator shared the
// server's machine. Where this process may use more than one CPU, the bench
// can split them: the load generator (this process: simulated users, go-redis
// clients, observers) on the first half, every server it starts (MyRedis,
// redis-server, queue instances) on the rest. It uses taskset from util-linux:
// children are started as `taskset -c <cpus> <binary> ...` (so every thread
// of theirs inherits the mask from the first instruction), and this process's
// threads are moved with `taskset -a -p -c`, with GOMAXPROCS set to match.

// CPUPlan says where the load generator and the servers run.
type CPUPlan struct {
	Pinned     bool   `json:"pinned"`
	LoadCPUs   string `json:"load_cpus,omitempty"`   // this process (taskset list, e.g. "0")
	ServerCPUs string `json:"server_cpus,omitempty"` // every server the bench starts
	Allowed    string `json:"allowed_cpus"`          // what this process was allowed at start
	How        string `json:"how"`
}

// String describes the plan for a report.
func (p CPUPlan) String() string {
	if !p.Pinned {
		return fmt.Sprintf("not pinned: load generator and servers share CPUs %s (%s)", p.Allowed, p.How)
	}
	return fmt.Sprintf("pinned with %s: load generator (this process, GOMAXPROCS %d) on CPU %s, servers on CPU %s",
		p.How, len(expandCPUs(p.LoadCPUs)), p.LoadCPUs, p.ServerCPUs)
}

// allowedCPUs is this process's CPU list at start (Cpus_allowed_list).
var allowedCPUs = readAllowedCPUs()

func readAllowedCPUs() []int {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				if cpus := expandCPUs(strings.TrimSpace(v)); len(cpus) > 0 {
					return cpus
				}
			}
		}
	}
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// expandCPUs reads a CPU list such as "0-3,6".
func expandCPUs(s string) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out
}

func formatCPUs(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// PlanCPUs decides the split for mode "auto" (pin when there are at least two
// CPUs and taskset is installed), "on" (the same, an error when impossible)
// or "off".
func PlanCPUs(mode string) (CPUPlan, error) {
	plan := CPUPlan{Allowed: formatCPUs(allowedCPUs), How: "taskset (util-linux)"}
	switch mode {
	case "off":
		plan.How = "--pin off"
		return plan, nil
	case "auto", "on":
	default:
		return plan, fmt.Errorf("bad --pin %q (want auto, on or off)", mode)
	}
	_, err := exec.LookPath("taskset")
	switch {
	case len(allowedCPUs) < 2:
		plan.How = "one CPU: nothing to split"
	case err != nil:
		plan.How = "taskset not found"
	default:
		half := len(allowedCPUs) / 2
		plan.Pinned = true
		plan.LoadCPUs, plan.ServerCPUs = formatCPUs(allowedCPUs[:half]), formatCPUs(allowedCPUs[half:])
		return plan, nil
	}
	if mode == "on" {
		return plan, fmt.Errorf("--pin on: cannot pin (%s)", plan.How)
	}
	return plan, nil
}

// ApplyCPUs moves this process to the plan's load CPUs (or back to every
// allowed CPU when the plan is not pinned) and makes the servers started from
// now on use the plan's server CPUs.
func (e *Env) ApplyCPUs(plan CPUPlan) error {
	cpus, procs := formatCPUs(allowedCPUs), len(allowedCPUs)
	if plan.Pinned {
		cpus, procs = plan.LoadCPUs, len(expandCPUs(plan.LoadCPUs))
	}
	if _, err := exec.LookPath("taskset"); err == nil {
		out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(os.Getpid())).CombinedOutput()
		if err != nil {
			return fmt.Errorf("taskset -a -p -c %s: %v: %s", cpus, err, out)
		}
	} else if plan.Pinned {
		return err
	}
	runtime.GOMAXPROCS(procs)
	e.CPUs = plan
	return nil
}

// command builds the exec.Cmd of a server, under taskset when pinned.
func (e *Env) command(path string, args ...string) *exec.Cmd {
	if e.CPUs.Pinned && e.CPUs.ServerCPUs != "" {
		return exec.Command("taskset", append([]string{"-c", e.CPUs.ServerCPUs, path}, args...)...)
	}
	return exec.Command(path, args...)
}

// ServerPinning runs the server scenario twice, with the load generator and
// the servers pinned to separate CPUs and then unpinned, and sets the two side
// by side. It needs a plan that can pin; it leaves this process unpinned.
func (e *Env) ServerPinning(ctx context.Context, p ServerParams, pinned CPUPlan) (*Report, error) {
	if !pinned.Pinned {
		return nil, fmt.Errorf("server --pin compare: cannot pin here (%s)", pinned.How)
	}
	r := e.newReport("server", p)
	unpinned := pinned
	unpinned.Pinned, unpinned.How = false, "taskset (util-linux), reset to every allowed CPU"
	var runs [2]*Report
	for i, plan := range []CPUPlan{pinned, unpinned} {
		if err := e.ApplyCPUs(plan); err != nil {
			return nil, err
		}
		r, err := e.Server(ctx, p)
		if err != nil {
			return nil, err
		}
		runs[i] = r
	}
	r.CPUs = "compared: " + pinned.String() + "; then " + unpinned.String()
	a, b := runs[0].Results.(ServerResults), runs[1].Results.(ServerResults)
	r.Machine.Servers = runs[0].Machine.Servers
	t := Table{
		Title:  "pinned (load generator and servers on separate CPUs) against unpinned (all share both), same run, pinned first",
		Header: []string{"command", "server", "pinned ops/s", "unpinned ops/s", "pinned/unpinned", "pinned p50/p99 µs", "unpinned p50/p99 µs"},
	}
	for i, c := range a.Cells {
		if i >= len(b.Cells) || b.Cells[i].Command != c.Command || b.Cells[i].Target != c.Target {
			break
		}
		u := b.Cells[i]
		ratio := "-"
		if u.OpsPerSec > 0 && c.OpsPerSec > 0 {
			ratio = fmt.Sprintf("%.2f", c.OpsPerSec/u.OpsPerSec)
		}
		t.AddRow(c.Command, c.Target, fmt.Sprintf("%.0f", c.OpsPerSec), fmt.Sprintf("%.0f", u.OpsPerSec), ratio,
			fmt.Sprintf("%.0f / %.0f", c.P50us, c.P99us), fmt.Sprintf("%.0f / %.0f", u.P50us, u.P99us))
	}
	r.Tables = append(r.Tables, t)
	for i, run := range runs {
		label := [2]string{"pinned", "unpinned"}[i]
		for _, tb := range run.Tables {
			tb.Title = label + ": " + tb.Title
			r.Tables = append(r.Tables, tb)
		}
	}
	r.Notes = append(r.Notes, runs[0].Notes...)
	r.Notes = append(r.Notes,
		"pinned: this process (the go-redis clients) moved with taskset -a -p -c and GOMAXPROCS set to its CPUs; every server started as taskset -c <cpus> <binary>, so all its threads inherit the mask.",
		"the machine is shared with other work: both runs are noisy; compare within a row, not across runs of different days.")
	r.Results = map[string]ServerResults{"pinned": a, "unpinned": b}
	return r.finish(), nil
}
