package queue

import (
	"context"
	"crypto/sha256"
	"errors"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Proof of work at join (issue 19): with a queue's PowBits above zero, a
// join must carry the solution of a fresh challenge: a string s such that
// SHA-256(challenge + ":" + s) starts with PowBits zero bits (hashcash). The
// page solves it in a Web Worker; a script that joins thousands of times pays
// for every join.
//
// A challenge is "<nonce>.<expires unix ms>.<bits>.<mac>" in its own MAC
// domain, so no instance keeps it; a solution is spent by SET
// wr:{q}:pow:<nonce> NX PX <until it expires>, so each challenge admits one
// join.

// PowTTL is how long a challenge may be solved and used.
const PowTTL = 2 * time.Minute

// DefaultPowBits is the difficulty a queue gets when an admin turns proof of
// work on without naming one. MaxPowBits bounds it.
const (
	DefaultPowBits = 20
	MaxPowBits     = 32
	maxSolutionLen = 64
)

var (
	// ErrBadPoW: the challenge is malformed, forged or expired, its
	// difficulty below the queue's, or the solution wrong (400).
	ErrBadPoW = errors.New("queue: invalid proof of work")
	// ErrPoWUsed: the solution of that challenge was used already (400).
	ErrPoWUsed = errors.New("queue: proof of work already used")
)

// Challenge returns a new challenge of difficulty bits and its expiry.
func (e *Engine) Challenge(bits int) (string, time.Time) {
	exp := e.clock.Now().Add(PowTTL)
	payload := randomHex(12) + "." + strconv.FormatInt(exp.UnixMilli(), 10) + "." + strconv.Itoa(bits)
	return e.sig.sign(domainPow, payload), exp
}

// CheckPoW verifies a solution against the queue's difficulty (minBits) and
// spends it: ErrBadPoW, ErrPoWUsed, or a store error.
func (e *Engine) CheckPoW(ctx context.Context, challenge, solution string, minBits int) error {
	nonce, until, ok := e.verifyPoW(challenge, solution, minBits)
	if !ok {
		return ErrBadPoW
	}
	fresh, err := e.rdb.SetNX(ctx, e.k.prefix+"pow:"+nonce, 1, until).Result()
	if err != nil {
		return err
	}
	if !fresh {
		return ErrPoWUsed
	}
	return nil
}

// verifyPoW checks everything but the store: returns the challenge's nonce
// and how long it stays valid.
func (e *Engine) verifyPoW(challenge, solution string, minBits int) (string, time.Duration, bool) {
	if len(solution) == 0 || len(solution) > maxSolutionLen || len(challenge) > 200 {
		return "", 0, false
	}
	payload, ok := e.sig.verify(domainPow, challenge)
	if !ok {
		return "", 0, false
	}
	parts := strings.Split(payload, ".")
	if len(parts) != 3 {
		return "", 0, false
	}
	expMs, err1 := strconv.ParseInt(parts[1], 10, 64)
	n, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || n < minBits {
		return "", 0, false
	}
	left := time.UnixMilli(expMs).Sub(e.clock.Now())
	if left <= 0 || left > PowTTL+time.Minute {
		return "", 0, false
	}
	if LeadingZeroBits(challenge, solution) < n {
		return "", 0, false
	}
	return parts[0], left, true
}

// LeadingZeroBits counts the zero bits that begin SHA-256(challenge + ":" +
// solution).
func LeadingZeroBits(challenge, solution string) int {
	sum := sha256.Sum256([]byte(challenge + ":" + solution))
	n := 0
	for _, b := range sum {
		if b != 0 {
			return n + bits.LeadingZeros8(b)
		}
		n += 8
	}
	return n
}

const domainPow = "pow"
