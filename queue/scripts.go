package queue

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// admitSrc is the atomic strategy's round (scripts/admit.lua).
//
//go:embed scripts/admit.lua
var admitSrc string

// admitScript runs by EVALSHA and falls back to EVAL when the store does not
// have it cached yet (go-redis Script.Run).
var admitScript = redis.NewScript(admitSrc)
