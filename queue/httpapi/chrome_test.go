package httpapi_test

// Headless Chromium for the browser tests, driven with chromedp. The tests
// need Chromium (Debian's chromium package; .ci/run installs it) and skip
// with a message without it. Screenshots go to $WAITROOM_ARTIFACTS, default
// artifacts/ at the repository root.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
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

func artifactsDir(t *testing.T) string {
	dir := os.Getenv("WAITROOM_ARTIFACTS")
	if dir == "" {
		wd, err := os.Getwd()
		require.NoError(t, err)
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, "artifacts")
				break
			}
			if filepath.Dir(d) == d {
				dir = filepath.Join(wd, "artifacts")
				break
			}
		}
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// newBrowser starts headless Chromium with a fresh profile (skipping the
// test without Chromium); it ends with t.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		t.Skip("chromium not found (apt-get install chromium, or set WAITROOM_CHROMIUM); skipping the browser test")
	}
	// Our own profile directory: Chromium's helper processes may still write
	// to it for a moment after the end, which t.TempDir's check dislikes.
	profile, err := os.MkdirTemp("", "waitroom-chromium-")
	require.NoError(t, err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true), chromedp.WindowSize(1280, 860))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	// Start it now, so a broken browser fails here with its reason.
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate("about:blank")), "start chromium")
	return browser
}

// tab is one browser tab.
type tab struct{ ctx context.Context }

func newTab(t *testing.T, browser context.Context) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	return &tab{ctx: ctx}
}

// eval evaluates expr and returns its value as text ("" for null).
func (p *tab) eval(expr string) (string, error) {
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[any](expr))
	if err != nil || v == nil {
		return "", err
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return fmt.Sprint(v), nil
}

// waitFor evaluates expr until it returns a non-empty string, and returns it.
func (p *tab) waitFor(t *testing.T, what, expr string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = p.eval(expr)
		if last != "" {
			return last
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, _ := p.eval(`location.href + "\n" + (document.body ? document.body.innerText : "")`)
	t.Fatalf("waiting for %s: gave up after %v (last %q, err %v); page:\n%v", what, timeout, last, lastErr, body)
	return ""
}

func (p *tab) navigate(t *testing.T, u string) {
	t.Helper()
	require.NoError(t, chromedp.Do(p.ctx, chromedp.Navigate(u)))
}

func (p *tab) reload(t *testing.T) {
	t.Helper()
	require.NoError(t, chromedp.Do(p.ctx, chromedp.Reload()))
}

// onNewDocument runs src in every document the tab loads from now on.
func (p *tab) onNewDocument(t *testing.T, src string) {
	t.Helper()
	_, err := chromedp.Run(p.ctx, func(ctx context.Context, tg *chromedp.Target) (struct{}, error) {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return struct{}{}, err
	})
	require.NoError(t, err)
}

// viewport sets the page size: a desktop window or a phone.
func (p *tab) viewport(t *testing.T, width, height int64, scale float64, mobile bool) {
	t.Helper()
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(scale)}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile)
	}
	require.NoError(t, chromedp.Do(p.ctx, chromedp.EmulateViewport(width, height, opts...)))
}

// screenshot saves a PNG of the page to path.
func (p *tab) screenshot(t *testing.T, path string) {
	t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "</", `<\/`)
}
