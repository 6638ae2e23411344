// Tests of the deployment files (Dockerfile, compose files, systemd units)
// against the binaries they start. No Docker daemon exists here, so the image
// is not built: the tests check that every command, flag, port and variable
// these files name is one the programs accept. systemd-analyze verifies the
// units where it is installed.
package deploy_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"waitroom/myredis"
)

// binDir holds the programs, built once by TestMain.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "deploy-bin")
	if err != nil {
		panic(err)
	}
	out, err := exec.Command("go", "build", "-o", dir+"/", "../cmd/...").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic(string(out))
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func binaries(*testing.T) string { return binDir }

var flagLine = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)(?: (\S+))?`)

// goFlags lists the flags of a Go program (from -h): name -> takes a value.
func goFlags(t *testing.T, bin string) map[string]bool {
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range flagLine.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = m[2] != ""
	}
	require.NotEmpty(t, flags, "no flags in %s -h: %s", bin, out)
	return flags
}

// checkArgs checks args against the program they are given to and returns the
// port it listens on ("" when none is named).
func checkArgs(t *testing.T, dir, prog string, args []string) string {
	t.Helper()
	if prog == "myredis" {
		cfg, err := myredis.ParseArgs(args)
		require.NoError(t, err, "myredis %v", args)
		return strconv.Itoa(cfg.Port)
	}
	flags := goFlags(t, filepath.Join(dir, prog))
	port := ""
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		require.True(t, ok, "%s: %q is not a flag", prog, args[i])
		name, val, hasVal := strings.Cut(name, "=")
		takes, known := flags[name]
		require.True(t, known, "%s has no flag --%s", prog, name)
		if takes && !hasVal {
			require.Less(t, i+1, len(args), "%s --%s needs a value", prog, name)
			i++
			val = args[i]
		}
		if name == "listen" {
			_, port, _ = strings.Cut(val, ":")
		}
	}
	return port
}

type service struct {
	Build       any               `yaml:"build"`
	Image       string            `yaml:"image"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Command     []string          `yaml:"command"`
	Ports       []string          `yaml:"ports"`
	Environment map[string]string `yaml:"environment"`
}

type compose struct {
	Services map[string]service `yaml:"services"`
}

func readCompose(t *testing.T, path string) compose {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var c compose
	require.NoError(t, yaml.Unmarshal(raw, &c), path)
	return c
}

// program names the binary a service runs.
func program(s service) string {
	if len(s.Entrypoint) > 0 {
		return filepath.Base(s.Entrypoint[0])
	}
	if s.Image == "waitroom" {
		return "myredis" // the image's ENTRYPOINT
	}
	return ""
}

func TestComposeServicesMatchTheBinaries(t *testing.T) {
	dir := binaries(t)
	c := readCompose(t, "compose.yaml")
	require.Len(t, c.Services, 5, "store, three queue instances, demo target (as make run)")
	queues := 0
	for name, s := range c.Services {
		prog := program(s)
		require.NotEmpty(t, prog, name)
		port := checkArgs(t, dir, prog, s.Command)
		require.NotEmpty(t, port, "%s names no port", name)
		require.Len(t, s.Ports, 1, name)
		parts := strings.Split(s.Ports[0], ":")
		assert.Equal(t, port, parts[len(parts)-1], "%s: published port is the one the program listens on", name)
		flags := map[string]bool{}
		if prog != "myredis" {
			flags = goFlags(t, filepath.Join(dir, prog))
		}
		for env := range s.Environment {
			prefix := strings.ToUpper(prog) + "_"
			flag, ok := strings.CutPrefix(env, prefix)
			require.True(t, ok, "%s: %s is not one of %s's variables", name, env, prog)
			_, known := flags[strings.ReplaceAll(strings.ToLower(flag), "_", "-")]
			assert.True(t, known, "%s: %s names no flag of %s", name, env, prog)
		}
		if prog == "queue" {
			queues++
			assert.Contains(t, strings.Join(s.Command, " "), "redis://store:6379", "%s uses the store service", name)
		}
	}
	assert.Equal(t, 3, queues)

	redis := readCompose(t, "compose.redis.yaml")
	store := redis.Services["store"]
	require.NotEmpty(t, store.Command)
	assert.Equal(t, "redis-server", store.Command[0])
	// MyRedis takes the same arguments as redis-server: the variant's command must parse here too.
	checkArgs(t, dir, "myredis", store.Command[1:])
}

func TestDockerfileBuildsWhatMakeBuilds(t *testing.T) {
	dir := binaries(t)
	raw, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	df := string(raw)
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	assert.Regexp(t, `build -o \$\(BIN\)/ \./cmd/\.\.\.`, string(mk), "make build builds ./cmd/...")
	assert.Regexp(t, `RUN go build .*-ldflags "-s -w" -o /out/ \./cmd/\.\.\.`, df)
	assert.Contains(t, df, "CGO_ENABLED=0")
	assert.Regexp(t, `(?m)^USER nonroot`, df)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	copyLine := regexp.MustCompile(`(?m)^COPY --from=build (.+) /usr/local/bin/$`).FindStringSubmatch(df)
	require.NotNil(t, copyLine)
	for _, e := range entries {
		assert.Contains(t, strings.Fields(copyLine[1]), "/out/"+e.Name(), "the image carries every binary")
	}
	cmdLine := regexp.MustCompile(`(?m)^CMD \[(.*)\]$`).FindStringSubmatch(df)
	require.NotNil(t, cmdLine)
	var args []string
	require.NoError(t, yaml.Unmarshal([]byte("["+cmdLine[1]+"]"), &args))
	checkArgs(t, dir, "myredis", args)
}

// unitExec returns the ExecStart of a unit file, split into words.
func unitExec(t *testing.T, path string) []string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			return strings.Fields(v)
		}
	}
	t.Fatalf("%s has no ExecStart", path)
	return nil
}

func TestSystemdUnits(t *testing.T) {
	dir := binaries(t)
	my := unitExec(t, "systemd/myredis.service")
	cfg, err := myredis.ParseArgs(my[1:])
	require.NoError(t, err)
	assert.Equal(t, "/var/lib/myredis", cfg.Dir, "the AOF goes to the StateDirectory")
	assert.Equal(t, "systemd", cfg.Supervised, "Type=notify needs READY=1 from the server")
	q := unitExec(t, "systemd/queue@.service")
	checkArgs(t, dir, "queue", slices.Clone(q[1:]))

	for _, unit := range []string{"systemd/myredis.service", "systemd/queue@.service"} {
		raw, err := os.ReadFile(unit)
		require.NoError(t, err)
		for _, want := range []string{"DynamicUser=yes", "ProtectSystem=strict", "NoNewPrivileges=yes"} {
			assert.Contains(t, string(raw), want, unit)
		}
	}
	raw, _ := os.ReadFile("systemd/myredis.service")
	assert.Contains(t, string(raw), "StateDirectory=myredis")

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: units checked by parsing only")
		return
	}
	// verify with the binaries' paths pointed at the ones just built
	tmp := t.TempDir()
	for src, dst := range map[string]string{"systemd/myredis.service": "myredis.service", "systemd/queue@.service": "queue@8081.service"} {
		raw, err := os.ReadFile(src)
		require.NoError(t, err)
		text := strings.ReplaceAll(string(raw), "/usr/local/bin/", dir+"/")
		require.NoError(t, os.WriteFile(filepath.Join(tmp, dst), []byte(text), 0o644))
		out, err := exec.Command(analyze, "verify", filepath.Join(tmp, dst)).CombinedOutput()
		// verify also judges the host (e.g. a missing EnvironmentFile is only a start-time error);
		// any complaint about the unit's own lines fails the test.
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, dst) && (strings.Contains(line, "Unknown") || strings.Contains(line, "Invalid") ||
				strings.Contains(line, "not executable") || strings.Contains(line, "Failed to parse")) {
				t.Errorf("systemd-analyze verify %s: %s", dst, line)
			}
		}
		_ = err
	}
}
