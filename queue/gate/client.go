package gate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// queueClient calls the queue service's site-facing routes.
type queueClient struct {
	urls   []string
	queue  string
	client *http.Client
}

// queueAnswer is the part of a queue answer the gate reads.
type queueAnswer struct {
	status    int
	Session   string `json:"session"` // /enter: the entered session's token
	ExpiresAt string `json:"expires_at"`
	expiresAt time.Time
}

// enter sends the pass with an Idempotency-Key, the same to every instance it
// tries: when an instance entered the pass but its answer was lost (a
// timeout, a store failover), the next one answers the same session instead
// of 409 "pass used".
func (q *queueClient) enter(ctx context.Context, pass string) (queueAnswer, error) {
	var key [16]byte
	rand.Read(key[:])
	return q.call(ctx, "/enter", "", hex.EncodeToString(key[:]), map[string]string{"pass": pass})
}

func (q *queueClient) heartbeat(ctx context.Context, token string) (queueAnswer, error) {
	return q.call(ctx, "/heartbeat", token, "", struct{}{})
}

func (q *queueClient) release(ctx context.Context, token string) (queueAnswer, error) {
	return q.call(ctx, "/release", token, "", struct{}{})
}

// call POSTs body as JSON to path on the first instance that answers (a 503
// counts as no answer), with the bearer token and the idempotency key when
// given.
func (q *queueClient) call(ctx context.Context, path, token, key string, body any) (queueAnswer, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return queueAnswer{}, err
	}
	var lastErr error
	for _, base := range q.urls {
		a, err := q.callOne(ctx, base+"/v1/queues/"+url.PathEscape(q.queue)+path, token, key, data)
		if err == nil {
			return a, nil
		}
		lastErr = err
	}
	return queueAnswer{}, lastErr
}

func (q *queueClient) callOne(ctx context.Context, u, token, key string, data []byte) (queueAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(data))
	if err != nil {
		return queueAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := q.client.Do(req)
	if err != nil {
		return queueAnswer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return queueAnswer{}, err
	}
	if res.StatusCode == http.StatusServiceUnavailable {
		return queueAnswer{}, fmt.Errorf("%s: 503", u)
	}
	a := queueAnswer{status: res.StatusCode}
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &a); err != nil {
			return queueAnswer{}, fmt.Errorf("%s: %w", u, err)
		}
		if a.ExpiresAt != "" {
			if a.expiresAt, err = time.Parse(time.RFC3339, a.ExpiresAt); err != nil {
				return queueAnswer{}, fmt.Errorf("%s: expires_at: %w", u, err)
			}
		}
	}
	return a, nil
}
