package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// sentinelFlags are the store's high-availability flags: a master found
// through Redis Sentinel, and WAIT after each write.
type sentinelFlags struct {
	masterName   string
	sentinels    string
	waitReplicas int
	waitTimeout  time.Duration
}

func (h *sentinelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.masterName, "redis-sentinel", "", "the store's master `name` as Redis Sentinel monitors it (the store is then found through --sentinel-addrs; --redis-url gives only the password and db)")
	fs.StringVar(&h.sentinels, "sentinel-addrs", "127.0.0.1:26379", "comma-separated host:port of the Sentinels (with --redis-sentinel)")
	fs.IntVar(&h.waitReplicas, "wait-replicas", 0, "follow every store script with WAIT `n` --wait-timeout on its connection, so an answered write is on n replicas (0: no WAIT)")
	fs.DurationVar(&h.waitTimeout, "wait-timeout", 100*time.Millisecond, "WAIT's timeout (with --wait-replicas)")
}

// newFailoverClient is a go-redis client that asks the Sentinels for the
// master and follows failovers.
func (h *sentinelFlags) newFailoverClient(redisURL string, timeout time.Duration) (redis.UniversalClient, error) {
	o, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("--redis-url: %v", err)
	}
	var addrs []string
	for _, a := range strings.Split(h.sentinels, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("--sentinel-addrs: no address")
	}
	return redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: h.masterName, SentinelAddrs: addrs,
		Username: o.Username, Password: o.Password, DB: o.DB,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolTimeout: timeout,
	}), nil
}
