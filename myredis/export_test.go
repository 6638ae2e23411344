package myredis

import "testing"

// ReadTree is readTree (aof_import_test.go) for the external tests.
func ReadTree(t testing.TB, dir string) map[string]string { return readTree(t, dir) }
