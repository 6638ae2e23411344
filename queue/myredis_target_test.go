package queue

// The queue's tests run against an in-process MyRedis beside real Redis.

import (
	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

func init() {
	myredisTarget = func() (string, bool, func(), error) {
		_, addr, stop, err := redistest.ServeMyRedis(myredis.Config{})
		if err != nil {
			return "", false, nil, err
		}
		return addr, true, func() { stop() }, nil
	}
}
