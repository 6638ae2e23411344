// Package bench turns the design notes' claims into measurements anyone can rerun:
// the leader race and what MyRedis --workers N breaks (race), admission overshoot
// by strategy and instance count (overshoot), the notes' ticket sale with a
// backlog at the opening, stepped load and the --workers breakage (sale),
// admit period against throughput
// (period), the accuracy of the ETA shown at join (eta), and MyRedis against real
// Redis on the queue's own command mix (server).
//
// Each scenario starts what it needs (MyRedis, redis-server, queue instances) on
// free loopback ports, or uses the URLs it is given, and returns a Report: tables
// for the terminal, structured results for results.json, and charts.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what one scenario run produced.
type Report struct {
	Scenario string    `json:"scenario"`
	Command  string    `json:"command"` // the command line that produced it
	Started  time.Time `json:"started"`
	Elapsed  Duration  `json:"elapsed"`
	Machine  Machine   `json:"machine"`
	CPUs     string    `json:"cpus,omitempty"` // where the load generator and the servers ran
	Params   any       `json:"params"`
	Tables   []Table   `json:"tables"`
	Notes    []string  `json:"notes,omitempty"` // findings in words, printed under the tables
	Results  any       `json:"results"`         // the scenario's own structured figures
	Charts   []Chart   `json:"charts,omitempty"`
}

// Table is a titled grid of cells for the terminal and report.md.
type Table struct {
	Title  string     `json:"title"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// AddRow appends one row, formatting each cell with fmt.Sprint.
func (t *Table) AddRow(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.Rows = append(t.Rows, row)
}

// Chart is one PNG written next to report.md.
type Chart struct {
	File  string `json:"file"`
	Title string `json:"title"`
	// render draws the chart into path; nil once written.
	render func(path string) error
}

// Machine describes where a run happened.
type Machine struct {
	Cores     int               `json:"cores"`
	CPU       string            `json:"cpu"`
	OS        string            `json:"os"`
	GoVersion string            `json:"go_version"`
	Servers   map[string]string `json:"servers"` // target name -> version string
}

// ThisMachine fills what can be known without the servers.
func ThisMachine() Machine {
	return Machine{
		Cores:     runtime.NumCPU(),
		CPU:       cpuModel(),
		OS:        runtime.GOOS + "/" + runtime.GOARCH,
		GoVersion: runtime.Version(),
		Servers:   map[string]string{},
	}
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Duration marshals as a string such as "1.5s".
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d Duration) String() string { return time.Duration(d).String() }

// PrintTables writes the report's tables and notes to w, aligned for a terminal.
func (r *Report) PrintTables(w io.Writer) {
	fmt.Fprintf(w, "== bench %s (%s, %d cores, %s)\n", r.Scenario, r.Machine.CPU, r.Machine.Cores, r.Machine.GoVersion)
	for _, t := range r.Tables {
		fmt.Fprintf(w, "\n%s\n", t.Title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(t.Header, "\t")+"\t")
		for _, row := range t.Rows {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		tw.Flush()
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range r.Notes {
			fmt.Fprintln(w, "* "+n)
		}
	}
	fmt.Fprintf(w, "\n(%s in %s)\n", r.Scenario, r.Elapsed)
}

// Write stores results.json, report.md and the charts in dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range r.Charts {
		c := &r.Charts[i]
		if c.render == nil {
			continue
		}
		if err := c.render(filepath.Join(dir, c.File)); err != nil {
			return fmt.Errorf("chart %s: %w", c.File, err)
		}
		c.render = nil
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.Markdown()), 0o644)
}

// Markdown renders the report for report.md and the README.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# bench %s\n\n", r.Scenario)
	fmt.Fprintf(&b, "`%s`\n\n", r.Command)
	fmt.Fprintf(&b, "%s, %d cores (%s), %s, %s; took %s.\n\n",
		r.Started.Format("2006-01-02 15:04 MST"), r.Machine.Cores, r.Machine.CPU, r.Machine.OS, r.Machine.GoVersion, r.Elapsed)
	if r.CPUs != "" {
		fmt.Fprintf(&b, "CPUs: %s.\n\n", r.CPUs)
	}
	for _, name := range sortedKeys(r.Machine.Servers) {
		fmt.Fprintf(&b, "- %s: %s\n", name, r.Machine.Servers[name])
	}
	if len(r.Machine.Servers) > 0 {
		b.WriteString("\n")
	}
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "## %s\n\n", t.Title)
		b.WriteString("| " + strings.Join(t.Header, " | ") + " |\n")
		b.WriteString("|" + strings.Repeat(" ---: |", len(t.Header)) + "\n")
		for _, row := range t.Rows {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
		b.WriteString("\n")
	}
	for _, n := range r.Notes {
		b.WriteString("- " + n + "\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, c := range r.Charts {
		fmt.Fprintf(&b, "![%s](%s)\n\n", c.Title, c.File)
	}
	params, _ := json.MarshalIndent(r.Params, "", "  ")
	fmt.Fprintf(&b, "<details><summary>parameters</summary>\n\n```json\n%s\n```\n</details>\n", params)
	return b.String()
}
