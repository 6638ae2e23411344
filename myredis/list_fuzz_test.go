package myredis

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzListArgs feeds the list argument parsers (LPOS's options, LMPOP's and
// BLMPOP's numkeys/LEFT|RIGHT/COUNT) arbitrary argument vectors: they must never
// panic, must answer an error or a result that fits the arguments, and the key
// finder the AOF rewrite uses must agree with the parser.
func FuzzListArgs(f *testing.F) {
	for _, seed := range []string{
		"RANK 1 COUNT 0 MAXLEN 5", "RANK -9223372036854775808", "COUNT", "rank 0", "MAXLEN -1",
		"1 a LEFT", "2 a b RIGHT COUNT 3", "9223372036854775807 a LEFT", "1 a LEFT COUNT 1 COUNT 1",
		"0 a LEFT", "-1 a", "3 a b LEFT", "1 a left count 0", "1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var args [][]byte
		for _, a := range strings.Split(s, " ") {
			args = append(args, []byte(a))
		}
		o, errMsg := parseLposOpts(args)
		if errMsg == "" && (o.rank == 0 || o.count < -1 || o.maxlen < 0) {
			t.Fatalf("LPOS %q parsed to %+v", s, o)
		}
		m, errMsg := parseMpop(args)
		keys := mpopKeys(1)(append([][]byte{[]byte("LMPOP")}, args...))
		if errMsg != "" {
			return
		}
		if len(m.keys) == 0 || len(m.keys) >= len(args) || m.count < 1 {
			t.Fatalf("LMPOP %q parsed to %d keys, count %d", s, len(m.keys), m.count)
		}
		if len(keys) != len(m.keys) {
			t.Fatalf("LMPOP %q: the parser finds %d keys, the key finder %d", s, len(m.keys), len(keys))
		}
		for i := range keys {
			if !bytes.Equal(keys[i], m.keys[i]) {
				t.Fatalf("LMPOP %q: key %d is %q to the parser, %q to the key finder", s, i, m.keys[i], keys[i])
			}
		}
	})
}
