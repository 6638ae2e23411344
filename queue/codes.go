package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Bypass codes (issue 19): an admin issues codes for VIPs and staff; a join
// with one is admitted at once when the queue is open and has a free place,
// or else goes to the head of the line. A code is "<id>.<mac>" (64 random
// bits, HMAC in its own domain, so a ticket or a pass is never a code); the
// store counts its uses in the hash wr:{q}:codes (r:<id> uses left, u:<id>
// uses so far, used: all uses of the queue), and the join script spends one
// use in the same step that places the user, so N uses let exactly N people
// in however many try at once.

var (
	ErrBadCode  = errors.New("queue: malformed or forged bypass code") // 400
	ErrCodeUsed = errors.New("queue: the bypass code has no use left") // 400
)

// MaxCodeUses bounds the uses of one code.
const MaxCodeUses = 1_000_000

func newCodeID() string { return randomHex(8) }

func validCodeID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// IssueCodes makes n codes of uses uses each and returns them signed.
func (e *Engine) IssueCodes(ctx context.Context, n, uses int) ([]string, error) {
	if n < 1 || uses < 1 || uses > MaxCodeUses {
		return nil, fmt.Errorf("%w: %d codes of %d uses", ErrBadSettings, n, uses)
	}
	codes := make([]string, n)
	args := make([]any, 0, 4*n)
	for i := range codes {
		id := newCodeID()
		codes[i] = e.sig.sign(domainCode, id)
		args = append(args, "r:"+id, uses, "u:"+id, 0)
	}
	if err := e.rdb.HSet(ctx, e.k.prefix+"codes", args...).Err(); err != nil {
		return nil, err
	}
	return codes, nil
}

// CodeUse is one code's count.
type CodeUse struct {
	ID   string // the code's id (the part before the dot; the code itself is not kept)
	Left int64
	Used int64
}

// CodeUses lists the queue's codes with their counts.
func (e *Engine) CodeUses(ctx context.Context) ([]CodeUse, error) {
	m, err := e.rdb.HGetAll(ctx, e.k.prefix+"codes").Result()
	if err != nil && err != redis.Nil {
		return nil, err
	}
	var out []CodeUse
	for f, v := range m {
		id, ok := strings.CutPrefix(f, "r:")
		if !ok {
			continue
		}
		left, _ := strconv.ParseInt(v, 10, 64)
		used, _ := strconv.ParseInt(m["u:"+id], 10, 64)
		out = append(out, CodeUse{ID: id, Left: left, Used: used})
	}
	return out, nil
}
