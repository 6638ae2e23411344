package myredis_test

// Differential cases for the struct Lua library: TestCompat (compat_test.go) runs
// them against a real redis-server and compares every reply byte for byte.

func init() {
	diffCases = append(diffCases,
		diffCase{"struct pack", structPackCmds()},
		diffCase{"struct unpack and size", structUnpackCmds()},
	)
}

func structPackCmds() [][]string {
	calls := []string{
		"'b', -1", "'B', 255", "'B', 256", "'h', -2", "'>h', 258", "'<H', 258", "'l', -3", "'L', 2^63",
		"'L', 2^64", "'L', -1", "'l', 0/0", "'T', 7", "'i', 1", "'i3', -1", "'i16', -1", "'>i9', 2^40",
		"'I32', 5", "'i0', 5", "'f', 1.5", "'>f', 0.1", "'d', 0.1", "'>d', -2.5", "'c', 'xyz'",
		"'c0', 'xyz'", "'c2', 'xyz'", "'c5', 'xy'", "'s', 'ab'", "'x'", "'bxh', 1, 2", "'!bi', 1, 2",
		"'!2bd', 1, 2", "'!bd', 1, 2", "'! b l', 1, 2", "'!3b', 1", "'z', 1", "'i33', 1", "'i'",
		"'b', 'x'", "'b', '12'", "'c99999999999', 'a'", "'<i>i', 1, 1", "'bb', 1", "'s', 1",
		"'b', 1.9", "'b', -1.9", "'h', 70000", "'i', 2^31", "'i', 2^62", "'I', -2^40", "'c\\0b', 'x'",
	}
	var cmds [][]string
	for _, c := range calls {
		cmds = append(cmds, []string{"EVAL", msgpackHex + "return hex(struct.pack(" + c + "))", "0"})
	}
	return append(cmds,
		[]string{"EVAL", "return struct.pack()", "0"},
		[]string{"EVAL", "return struct.pack({})", "0"},
		[]string{"EVAL", "struct.pack = 1", "0"},
	)
}

func structUnpackCmds() [][]string {
	calls := []string{
		"struct.unpack('b', '\\255')", "struct.unpack('B', '\\255')", "struct.unpack('>h', '\\1\\2')",
		"struct.unpack('<H', '\\1\\2')", "struct.unpack('l', '\\255\\255\\255\\255\\255\\255\\255\\255')",
		"struct.unpack('L', '\\255\\255\\255\\255\\255\\255\\255\\255')", "struct.unpack('i3', '\\255\\255\\255')",
		"struct.unpack('I3', '\\255\\255\\255')", "struct.unpack('i9', string.rep('\\255', 9))",
		"struct.unpack('I16', string.rep('\\1', 16))", "struct.unpack('i0', '')",
		"struct.unpack('f', struct.pack('f', 1.5))", "struct.unpack('>d', struct.pack('>d', 0.1))",
		"struct.unpack('c2', 'abc')", "struct.unpack('bc0', '\\2abc')", "struct.unpack('c0', 'abc')",
		"struct.unpack('s', 'ab\\0cd')", "struct.unpack('s', 'abcd')", "struct.unpack('ss', 'a\\0b\\0')",
		"struct.unpack('x', '')", "struct.unpack('xb', '\\1\\2')", "struct.unpack('!bi', '\\1\\0\\0\\0\\2\\0\\0\\0')",
		"struct.unpack('b', '\\1\\2\\3', 2)", "struct.unpack('b', '\\1\\2\\3', 4)", "struct.unpack('b', '\\1\\2\\3', 0)",
		"struct.unpack('b', '\\1\\2\\3', -1)", "struct.unpack('b', '\\1\\2\\3', '2')", "struct.unpack('i', '\\1\\2')",
		"struct.unpack('z', '\\1')", "struct.unpack('!3b', '\\1')", "struct.unpack('b', 5)", "struct.unpack('b')",
		"struct.unpack('', 'x')", "struct.unpack(string.rep('b', 7990), string.rep('\\1', 7990))",
		"struct.unpack(string.rep('b', 7999), string.rep('\\1', 7999))",
		"struct.size('bhilfdTxL')", "struct.size('!bd')", "struct.size('c5')", "struct.size('c0')",
		"struct.size('s')", "struct.size('z')", "struct.size('?')", "struct.size('!5')", "struct.size('i40')",
		"struct.size('i99999999999')", "struct.size()",
	}
	var cmds [][]string
	for _, c := range calls {
		cmds = append(cmds, []string{"EVAL", msgpackShow + "return show(" + c + ")", "0"})
	}
	return cmds
}
