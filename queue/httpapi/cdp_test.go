package httpapi_test

// A minimal Chrome DevTools Protocol client for the browser test: it starts
// headless Chromium, speaks WebSocket (RFC 6455, client side, text frames
// only) and sends CDP commands one at a time. No module beyond the standard
// library is needed.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// findChromium returns the browser binary, or "" when there is none.
func findChromium() string {
	if p := os.Getenv("WAITROOM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://[^\s]+)`)

// startChromium starts headless Chromium with a fresh profile and returns the
// DevTools HTTP address (host:port). It is killed when t ends.
func startChromium(t *testing.T, path string) string {
	t.Helper()
	// Our own profile directory: Chromium's helper processes may still write
	// to it for a moment after the kill, which t.TempDir's check dislikes.
	profile, err := os.MkdirTemp("", "waitroom-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--no-first-run", "--no-default-browser-check",
		"--mute-audio", "--hide-scrollbars", "--password-store=basic", "--use-mock-keychain",
		"--user-data-dir="+profile, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--window-size=1280,860", "about:blank")
	// A process group of its own, so the kill reaches the helper processes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	found := make(chan string, 1)
	var log bytes.Buffer
	var logMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := devtoolsLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case ws := <-found:
		u, err := url.Parse(ws)
		if err != nil {
			t.Fatal(err)
		}
		return u.Host
	case <-time.After(30 * time.Second):
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("chromium did not open DevTools within 30s; stderr:\n%s", log.String())
	}
	return ""
}

// newPage opens a tab and connects to it.
func newPage(t *testing.T, devtools string) *cdp {
	t.Helper()
	req, _ := http.NewRequest("PUT", "http://"+devtools+"/json/new?about:blank", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var target struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&target); err != nil || target.WebSocketDebuggerURL == "" {
		t.Fatalf("new tab: %v (status %d)", err, resp.StatusCode)
	}
	c, err := dialCDP(target.WebSocketDebuggerURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.close() })
	return c
}

// cdp is one WebSocket connection to a page target.
type cdp struct {
	conn net.Conn
	rd   *bufio.Reader
	id   int
}

func dialCDP(wsURL string) (*cdp, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return nil, err
	}
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.RequestURI(), u.Host, key)
	rd := bufio.NewReaderSize(conn, 1<<16)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != http.StatusSwitchingProtocols ||
		resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %s", resp.Status)
	}
	return &cdp{conn: conn, rd: rd}, nil
}

func (c *cdp) close() { c.conn.Close() }

// writeText sends one masked text frame.
func (c *cdp) writeText(p []byte) error {
	var hdr []byte
	hdr = append(hdr, 0x81)
	switch n := len(p); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	hdr = append(hdr, mask[:]...)
	body := make([]byte, len(p))
	for i := range p {
		body[i] = p[i] ^ mask[i%4]
	}
	_, err := c.conn.Write(append(hdr, body...))
	return err
}

// readMessage returns the next whole text message, answering pings.
func (c *cdp) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.rd, h[:]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c.rd, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(c.rd, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if h[1]&0x80 != 0 {
			return nil, errors.New("websocket: masked frame from the server")
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.rd, payload); err != nil {
			return nil, err
		}
		switch op {
		case 0x8:
			return nil, io.EOF
		case 0x9: // ping: answer with a pong carrying the same data
			c.conn.Write(append([]byte{0x8a, 0x80 | byte(len(payload)), 0, 0, 0, 0}, payload...))
			continue
		case 0xa:
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}

// call sends a CDP command and waits for its answer, skipping events.
func (c *cdp) call(method string, params any, result any) error {
	c.id++
	id := c.id
	req, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	defer c.conn.SetDeadline(time.Time{})
	if err := c.writeText(req); err != nil {
		return err
	}
	for {
		msg, err := c.readMessage()
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(msg, &resp) != nil || resp.ID != id {
			continue // an event, or an answer to nothing we wait for
		}
		if resp.Error != nil {
			return fmt.Errorf("%s: %s", method, resp.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(resp.Result, result)
		}
		return nil
	}
}

// eval evaluates a JavaScript expression in the page and returns its value.
func (c *cdp) eval(expr string) (any, error) {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return nil, err
	}
	if r.ExceptionDetails != nil {
		return nil, errors.New(r.ExceptionDetails.Text)
	}
	return r.Result.Value, nil
}

// waitFor evaluates expr until it returns a non-empty string, and returns it.
func (c *cdp) waitFor(t *testing.T, what, expr string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last any
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = c.eval(expr)
		if s, ok := last.(string); ok && s != "" {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, _ := c.eval(`location.href + "\n" + (document.body ? document.body.innerText : "")`)
	t.Fatalf("waiting for %s: gave up after %v (last %v, err %v); page:\n%v", what, timeout, last, lastErr, body)
	return ""
}

func (c *cdp) navigate(t *testing.T, u string) {
	t.Helper()
	if err := c.call("Page.navigate", map[string]any{"url": u}, nil); err != nil {
		t.Fatal(err)
	}
}

// viewport sets the page size: a desktop window or a phone.
func (c *cdp) viewport(t *testing.T, width, height int, scale float64, mobile bool) {
	t.Helper()
	err := c.call("Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// screenshot saves a PNG of the page to path.
func (c *cdp) screenshot(t *testing.T, path string) {
	t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	if err := c.call("Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "</", `<\/`)
}
