package queue

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Tickets and passes.
//
// A ticket id is 96 random bits in hex. The engine stores it as the member of
// the waiting and active sets. Clients never see the bare id: SignTicket
// wraps it in a token "<id>.<mac>" (HMAC-SHA256 over the queue and the id,
// keyed with the secret every instance shares), so a ticket from instance A is
// accepted by instance B and a forged one is refused without a store lookup.
//
// A pass is "<id>.<mac>" with a different MAC domain, so a ticket token is
// never a valid pass. A pass is single-use: admission writes wr:{q}:pass:<id>
// and Enter consumes it with GETDEL, one atomic command.

const macLen = 16 // bytes of HMAC-SHA256 kept; 128 bits

func newTicketID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("queue: crypto/rand: " + err.Error()) // never happens on supported platforms
	}
	return hex.EncodeToString(b[:])
}

func validTicketID(id string) bool {
	if len(id) != 24 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

type signer struct {
	secret []byte
	queue  string
}

func (s signer) mac(domain, id string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write([]byte(s.queue))
	m.Write([]byte{0})
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:macLen])
}

func (s signer) sign(domain, id string) string { return id + "." + s.mac(domain, id) }

// verify returns the id inside token when its MAC is right.
func (s signer) verify(domain, token string) (string, bool) {
	id, mac, ok := strings.Cut(token, ".")
	if !ok || !validTicketID(id) {
		return "", false
	}
	want := s.mac(domain, id)
	if !hmac.Equal([]byte(mac), []byte(want)) {
		return "", false
	}
	return id, true
}

const (
	domainTicket = "ticket"
	domainPass   = "pass"
)

// SignTicket returns the token a client holds for ticket id.
func (e *Engine) SignTicket(id string) string { return e.sig.sign(domainTicket, id) }

// VerifyTicket checks a ticket token and returns the ticket id, or ErrForged.
func (e *Engine) VerifyTicket(token string) (string, error) {
	id, ok := e.sig.verify(domainTicket, token)
	if !ok {
		return "", ErrForged
	}
	return id, nil
}

// passFor returns the pass of an admitted ticket.
func (e *Engine) passFor(id string) string { return e.sig.sign(domainPass, id) }
