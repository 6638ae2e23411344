package myredis

import "testing"

// FuzzObufLimits: client-output-buffer-limit's parser never panics, changes
// nothing when it refuses a value, and reads back what CONFIG GET prints.
func FuzzObufLimits(f *testing.F) {
	for _, s := range []string{"pubsub 32mb 8mb 60", "normal 0 0 0 slave 1 2 3", "PUBSUB 1k 2kb 3",
		"pubsub 1 1", "master 1 1 1", "pubsub 1 1 -1", "", "pubsub 99999999999999999999 1 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, val string) {
		var c Config
		c.initObuf()
		if err := c.setObufLimits(val); err != nil {
			if c.ObufLimits != defaultObufLimits {
				t.Fatalf("%q refused (%v) but changed the limits to %v", val, err, c.ObufLimits)
			}
			return
		}
		printed := formatObufLimits(c.ObufLimits)
		var back Config
		if err := back.setObufLimits(printed); err != nil || back.ObufLimits != c.ObufLimits {
			t.Fatalf("%q printed as %q reads back as %v (%v), want %v", val, printed, back.ObufLimits, err, c.ObufLimits)
		}
	})
}
