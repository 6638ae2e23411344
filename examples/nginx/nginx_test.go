// Runs nginx (Debian's package; .ci/run installs it) with waitroom.conf in
// front of a site, the gate sidecar and a stand-in queue, and walks a
// visitor through: sent to the room, enters with a pass, gets the cookie,
// reaches the site, leaves. Skips when nginx is not installed.
package nginx_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue/gate"
	"waitroom/queue/gate/gatetest"
)

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startNginx runs nginx with waitroom.conf, its upstreams and port replaced.
func startNginx(t *testing.T, site, sidecar string) string {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, statErr := os.Stat("/usr/sbin/nginx"); statErr != nil {
			t.Skip("nginx not installed (apt-get install nginx-light); skipping")
		}
		bin = "/usr/sbin/nginx"
	}
	conf, err := os.ReadFile("waitroom.conf")
	require.NoError(t, err)
	port := freePort(t)
	server := strings.NewReplacer(
		"server 127.0.0.1:3000;", "server "+site+";",
		"server 127.0.0.1:9100;", "server "+sidecar+";",
		"listen 8080;", fmt.Sprintf("listen 127.0.0.1:%d;", port),
	).Replace(string(conf))
	dir := t.TempDir()
	main := fmt.Sprintf(`daemon off;
user root;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 64; }
http {
  access_log %[1]s/access.log;
  client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fcgi; uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
%[2]s
}
`, dir, server)
	path := filepath.Join(dir, "nginx.conf")
	require.NoError(t, os.WriteFile(path, []byte(main), 0o644))
	cmd := exec.Command(bin, "-p", dir, "-c", path)
	out, _ := os.Create(filepath.Join(dir, "stderr"))
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx error.log:\n%s", logs)
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	logs, _ := os.ReadFile(filepath.Join(dir, "stderr"))
	t.Fatalf("nginx did not start: %s", logs)
	return ""
}

func TestNginxAuthRequest(t *testing.T) {
	q := gatetest.NewQueue("shop", nil)
	queueSrv := httptest.NewServer(q)
	defer queueSrv.Close()
	g, err := gate.New(gate.Config{QueueURLs: []string{queueSrv.URL}, Queue: "shop",
		RoomURL: "http://room.example/q/shop", Secret: []byte(strings.Repeat("s", 32))})
	require.NoError(t, err)
	sidecar := httptest.NewServer(g.Sidecar("/"))
	defer sidecar.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "site:"+r.URL.Path)
	}))
	defer site.Close()
	base := startNginx(t, strings.TrimPrefix(site.URL, "http://"), strings.TrimPrefix(sidecar.URL, "http://"))

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		res, err := client.Get(base + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(body)
	}

	res, body := get("/")
	assert.Equal(t, "site:/", body, "unprotected paths pass")

	res, _ = get("/checkout/cart")
	assert.Equal(t, http.StatusSeeOther, res.StatusCode)
	assert.Equal(t, "http://room.example/q/shop", res.Header.Get("Location"), "no session: to the room")

	res, _ = get("/checkout/cart?pass=forged")
	assert.Equal(t, http.StatusForbidden, res.StatusCode)

	res, _ = get("/checkout/cart?pass=good")
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	assert.Equal(t, "/checkout/cart", res.Header.Get("Location"))
	require.NotEmpty(t, res.Cookies(), "the session cookie is set")

	res, body = get("/checkout/cart")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "site:/checkout/cart", body, "with the cookie nginx serves the site")

	res, err = client.Post(base+"/leave", "text/plain", nil)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusSeeOther, res.StatusCode)
	assert.Equal(t, []string{"tok-1"}, q.Released())
	res, _ = get("/checkout/cart")
	assert.Equal(t, http.StatusSeeOther, res.StatusCode, "after leaving the cookie is gone")
}
