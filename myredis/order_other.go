//go:build !linux

package myredis

import "net"

// Without Linux's receive timestamps jobs carry no arrival time and run in the
// order they reach the channel (see order.go).

type orderSys struct{}

type orderRead struct{}

func (o *arrivalOrder) initSys() bool { return false }

func (o *arrivalOrder) wrap(c net.Conn) net.Conn { return c }

func (o *arrivalOrder) closeSys() {}

func (c *orderConn) readQuiet(p []byte) (int, error) { return c.Conn.Read(p) }

func (o *arrivalOrder) earlierInKernel(int64, *orderConn, *int64) bool { return false }
