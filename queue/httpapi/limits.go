package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// clientIP is the address a limit is counted against: the peer, or, when the
// peer is a trusted proxy, the rightmost X-Forwarded-For entry that is not a
// trusted proxy (entries left of it could be written by anyone).
func (s *Server) clientIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	if !s.trusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer // a malformed hop: believe no further
		}
		a = a.Unmap()
		if !s.trusted(a) {
			return a
		}
	}
	return peer
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// errLimited carries the wait a 429 tells the client.
type errLimited struct{ retry time.Duration }

func (e errLimited) Error() string { return "rate limited" }

// allow counts one event of key against perMinute in the store (GCRA, shared
// by every instance; the key carries the queue's hash tag so it lives on the
// queue's cluster node). cost 0 only asks whether one more event would be
// allowed, without counting it.
func (s *Server) allow(ctx context.Context, key string, perMinute, cost int) error {
	if s.limiter == nil || perMinute <= 0 {
		return nil
	}
	res, err := s.limiter.AllowN(ctx, key, redis_rate.Limit{Rate: perMinute, Burst: perMinute, Period: time.Minute}, cost)
	if err != nil {
		return err
	}
	switch {
	case cost > 0 && res.Allowed == 0:
		return errLimited{retry: res.RetryAfter}
	case cost == 0 && res.Remaining < 1:
		return errLimited{retry: max(res.RetryAfter, time.Minute/time.Duration(perMinute))}
	}
	return nil
}

// writeLimited answers 429 with Retry-After in whole seconds.
func writeLimited(w http.ResponseWriter, err errLimited, what string) {
	secs := int((err.retry + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	writeError(w, http.StatusTooManyRequests, "too many %s from this address; retry in %d s", what, max(secs, 1))
}

// maxUserIDLife bounds how far in the future a signed user id may expire.
const maxUserIDLife = 24 * time.Hour

var errUnsigned = errors.New("a user id must be signed by the site (fields user, expires, sig)")

// verifyUser checks that the protected site signed user until expires:
// sig = hex(HMAC-SHA256(key, user + "\n" + expires)), expires in unix seconds.
func verifyUser(key []byte, user string, expires int64, sig string, now time.Time) error {
	if len(key) == 0 {
		return errors.New("this queue takes no user ids (no join key); join without one")
	}
	if sig == "" || expires == 0 {
		return errUnsigned
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(user + "\n" + strconv.FormatInt(expires, 10)))
	want := hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(strings.ToLower(sig)), []byte(want)) {
		return errors.New("the user id's signature is wrong")
	}
	exp := time.Unix(expires, 0)
	switch {
	case !now.Before(exp):
		return errors.New("the signed user id has expired")
	case exp.Sub(now) > maxUserIDLife:
		return errors.New("the signed user id expires more than 24 h from now")
	}
	return nil
}
