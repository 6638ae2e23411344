package gate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// cookieValue is what the session cookie carries: the queue's session token,
// when the session ends without a heartbeat, and when the last heartbeat was.
type cookieValue struct {
	token     string
	expires   time.Time
	heartbeat time.Time
}

// cookieCodec signs and checks cookie values with HMAC-SHA256:
// base64url(token) "." expires-ms "." heartbeat-ms "." base64url(mac).
type cookieCodec struct{ secret []byte }

var b64 = base64.RawURLEncoding

func (c cookieCodec) mac(body string) []byte {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte("waitroom-gate-v1\x00"))
	m.Write([]byte(body))
	return m.Sum(nil)
}

func (c cookieCodec) encode(v cookieValue) string {
	body := b64.EncodeToString([]byte(v.token)) + "." +
		strconv.FormatInt(v.expires.UnixMilli(), 10) + "." +
		strconv.FormatInt(v.heartbeat.UnixMilli(), 10)
	return body + "." + b64.EncodeToString(c.mac(body))
}

// decode checks the signature and parses the value; ok is false for anything
// forged, truncated or malformed.
func (c cookieCodec) decode(s string) (cookieValue, bool) {
	if len(s) > 4096 {
		return cookieValue{}, false
	}
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return cookieValue{}, false
	}
	body, sig := s[:i], s[i+1:]
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, c.mac(body)) {
		return cookieValue{}, false
	}
	parts := strings.Split(body, ".")
	if len(parts) != 3 {
		return cookieValue{}, false
	}
	token, err := b64.DecodeString(parts[0])
	if err != nil || len(token) == 0 {
		return cookieValue{}, false
	}
	exp, err1 := strconv.ParseInt(parts[1], 10, 64)
	hb, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return cookieValue{}, false
	}
	return cookieValue{token: string(token), expires: time.UnixMilli(exp), heartbeat: time.UnixMilli(hb)}, true
}
