//go:build !linux

package myredis

import "runtime"

// unameString is INFO's os where there is no uname(2) to ask from Go's
// standard library: Go's names of the system and the machine.
func unameString() string { return runtime.GOOS + " " + runtime.GOARCH }
