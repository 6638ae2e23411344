package queue

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Tickets, passes and session tokens.
//
// A ticket id is 96 random bits in hex. The engine stores it as the member of
// the waiting and active sets. Clients never see the bare id: SignTicket
// wraps it in a token "<id>.<mac>" (HMAC-SHA256 over the domain, the queue and
// the payload, keyed with the secret every instance shares), so a ticket from
// instance A is accepted by instance B and a forged one is refused without a
// store lookup.
//
// A pass is "<id>.<nonce>.<mac>" in another MAC domain: the nonce names one
// admission (the store keeps the current one in the ticket's hash), so a pass
// works for that admission only, once, and a ticket token is never a pass.
// Enter turns a pass into a session token "<id>.<nonce>.<mac>" in a third
// domain; only that token can extend (Heartbeat) or end (ReleaseSession) the
// entered session.

const macLen = 16 // bytes of HMAC-SHA256 kept; 128 bits

func newTicketID() string { return randomHex(12) }

// newNonce names one admission made by a plain-command strategy.
func newNonce() string { return randomHex(8) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("queue: crypto/rand: " + err.Error()) // never happens on supported platforms
	}
	return hex.EncodeToString(b)
}

func validTicketID(id string) bool {
	if len(id) != 24 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// validNonce accepts the atomic strategy's decimal admission numbers and the
// other strategies' hex nonces.
func validNonce(n string) bool {
	if n == "" || len(n) > 32 {
		return false
	}
	for _, c := range n {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

type signer struct {
	secret []byte
	queue  string
}

func (s signer) mac(domain, payload string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write([]byte(s.queue))
	m.Write([]byte{0})
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:macLen])
}

func (s signer) sign(domain, payload string) string { return payload + "." + s.mac(domain, payload) }

// verify returns the payload inside token when its MAC is right.
func (s signer) verify(domain, token string) (string, bool) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return "", false
	}
	payload, mac := token[:i], token[i+1:]
	want := s.mac(domain, payload)
	if !hmac.Equal([]byte(mac), []byte(want)) {
		return "", false
	}
	return payload, true
}

// verifyAdmission checks a pass or session token: "<id>.<nonce>.<mac>".
func (s signer) verifyAdmission(domain, token string) (id, nonce string, ok bool) {
	payload, ok := s.verify(domain, token)
	if !ok {
		return "", "", false
	}
	id, nonce, ok = strings.Cut(payload, ".")
	if !ok || !validTicketID(id) || !validNonce(nonce) {
		return "", "", false
	}
	return id, nonce, true
}

const (
	domainTicket  = "ticket"
	domainPass    = "pass"
	domainSession = "session"
	domainCode    = "code"
)

// SignTicket returns the token a client holds for ticket id.
func (e *Engine) SignTicket(id string) string { return e.sig.sign(domainTicket, id) }

// VerifyTicket checks a ticket token and returns the ticket id, or ErrForged.
func (e *Engine) VerifyTicket(token string) (string, error) {
	id, ok := e.sig.verify(domainTicket, token)
	if !ok || !validTicketID(id) {
		return "", ErrForged
	}
	return id, nil
}

// passFor returns the pass of one admission of a ticket.
func (e *Engine) passFor(id, nonce string) string { return e.sig.sign(domainPass, id+"."+nonce) }

// sessionFor returns the session token of one entered admission.
func (e *Engine) sessionFor(id, nonce string) string {
	return e.sig.sign(domainSession, id+"."+nonce)
}

// SessionTicket returns the ticket id inside a session token, or ErrForged.
func (e *Engine) SessionTicket(token string) (string, error) {
	id, _, ok := e.sig.verifyAdmission(domainSession, token)
	if !ok {
		return "", ErrForged
	}
	return id, nil
}
