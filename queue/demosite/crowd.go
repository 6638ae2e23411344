package demosite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Crowd simulates visitors so a demo queue moves: each one joins through a
// random instance, polls its status as told (poll_after_ms), enters with its
// pass, stays for a while, releases its place, rests, and comes back.
type Crowd struct {
	QueueURLs []string
	Queue     string
	Users     int
	Hold      time.Duration // mean time an admitted visitor stays (uniform in [Hold/2, 3*Hold/2])
	Client    *http.Client
	// ForwardedFor gives each visit its own client address in X-Forwarded-For
	// (from TEST-NET-3, 203.0.113.0/24: a header value, never contacted), so the
	// crowd does not spend the per-IP join budget of a person on the same machine.
	// The queue believes it only from its --trusted-proxies.
	ForwardedFor bool
}

// Run runs the crowd until ctx is done.
func (c *Crowd) Run(ctx context.Context) {
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if c.Hold <= 0 {
		c.Hold = 10 * time.Second
	}
	var wg sync.WaitGroup
	for i := 0; i < c.Users; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Spread the arrivals over a few seconds.
			if !sleep(ctx, time.Duration(rand.Int64N(int64(3*time.Second)))) {
				return
			}
			for ctx.Err() == nil {
				c.visit(ctx, fmt.Sprintf("crowd-%d", i))
				sleep(ctx, time.Second+time.Duration(rand.Int64N(int64(4*time.Second))))
			}
		}()
	}
	wg.Wait()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// visit is one visitor's trip through the queue.
func (c *Crowd) visit(ctx context.Context, _ string) {
	addr := ""
	if c.ForwardedFor {
		addr = fmt.Sprintf("203.0.113.%d", 1+rand.IntN(254))
	}
	ctx = context.WithValue(ctx, forwardedKey{}, addr)
	// Anonymous: a user id would have to be signed by the site (join key).
	code, st := c.do(ctx, "POST", "/join", "", `{}`)
	if code != http.StatusOK {
		return
	}
	ticket, _ := st["ticket"].(string)
	for st["state"] == "waiting" {
		wait, _ := st["poll_after_ms"].(float64)
		if !sleep(ctx, time.Duration(max(wait, 200))*time.Millisecond) {
			return
		}
		code, st = c.do(ctx, "GET", "/status", ticket, "")
		if code == http.StatusServiceUnavailable || code == 0 {
			st = map[string]any{"state": "waiting", "poll_after_ms": 1000.0}
			continue
		}
		if code != http.StatusOK {
			return
		}
	}
	pass, _ := st["pass"].(string)
	code, in := c.do(ctx, "POST", "/enter", "", `{"pass":"`+pass+`"}`)
	if code != http.StatusOK {
		return
	}
	session, _ := in["session"].(string)
	hold := c.Hold/2 + time.Duration(rand.Int64N(int64(c.Hold)+1))
	sleep(ctx, hold)
	c.do(context.WithoutCancel(ctx), "POST", "/release", session, "")
}

// forwardedKey carries a visit's X-Forwarded-For address in its context.
type forwardedKey struct{}

// do calls one random instance; code 0 means no answer.
func (c *Crowd) do(ctx context.Context, method, path, ticket, body string) (int, map[string]any) {
	base := strings.TrimRight(c.QueueURLs[rand.IntN(len(c.QueueURLs))], "/")
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+"/v1/queues/"+c.Queue+path, rd)
	if err != nil {
		return 0, nil
	}
	if ticket != "" {
		req.Header.Set("Authorization", "Bearer "+ticket)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if addr, _ := ctx.Value(forwardedKey{}).(string); addr != "" {
		req.Header.Set("X-Forwarded-For", addr)
	}
	res, err := c.Client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	out := map[string]any{}
	json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&out)
	return res.StatusCode, out
}
