package myredis

import "strings"

// Turning users back into rules, as Redis's ACLDescribeUser: ACL LIST, ACL
// GETUSER's "commands" and ACL SAVE print the shortest rules Redis would print.
// Single commands are listed by name where Redis lists them in its hash table's
// order (random per process), so only lists of one command compare byte for byte.

// describeUser is ACL LIST's text after "user <name> ".
func (a *aclState) describeUser(u *aclUser) string {
	if u.descr != "" {
		return u.descr
	}
	var b strings.Builder
	if u.enabled {
		b.WriteString("on ")
	} else {
		b.WriteString("off ")
	}
	if u.nopass {
		b.WriteString("nopass ")
	}
	switch u.sanitize {
	case skipSanitizePayload:
		b.WriteString("skip-sanitize-payload ")
	case sanitizePayload:
		b.WriteString("sanitize-payload ")
	}
	for _, p := range u.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, s := range u.selectors {
		if s.root {
			b.WriteString(a.describeSelector(s))
		} else {
			b.WriteString(" (" + a.describeSelector(s) + ")")
		}
	}
	u.descr = b.String()
	return u.descr
}

// describeSelector is ACLDescribeSelector: keys, channels, then command rules.
func (a *aclState) describeSelector(s *aclSelector) string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String() + " ")
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(a.describeCommands(s))
	return b.String()
}

func (k keyPattern) String() string {
	switch k.perm {
	case aclRead:
		return "%R~" + k.pattern
	case aclWrite:
		return "%W~" + k.pattern
	}
	return "~" + k.pattern
}

// keysText is GETUSER's "keys": the patterns joined by spaces.
func (s *aclSelector) keysText() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

// channelsText is GETUSER's "channels".
func (s *aclSelector) channelsText() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// describeCommands is ACLDescribeSelectorCommandRules: +@all or -@all, the
// categories that fit best one after another, then single commands.
func (a *aclState) describeCommands(s *aclSelector) string {
	var rules []string
	additive := !s.future
	fake := a.newSelector(false)
	if additive {
		rules = append(rules, "-@all")
		a.setSelector(fake, "-@all")
	} else {
		rules = append(rules, "+@all")
		a.setSelector(fake, "+@all")
	}
	temp := &aclSelector{cmds: append([]uint64(nil), s.cmds...)}
	applied := make([]bool, len(aclCategoryNames))
	for {
		best, mindiff, maxsame := -1, int(^uint(0)>>1), 0
		for j := range aclCategoryNames {
			if applied[j] {
				continue
			}
			on, off := a.countCategory(temp, 1<<j)
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
				best, mindiff, maxsame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		cat := uint32(1) << best
		a.setCategory(fake, cat, additive)
		a.setCategory(temp, cat, !additive)
		if additive {
			rules = append(rules, "+@"+aclCategoryNames[best])
		} else {
			rules = append(rules, "-@"+aclCategoryNames[best])
		}
		applied[best] = true
	}
	return strings.Join(a.singleCommandRules(s, fake, rules), " ")
}

// countCategory counts the commands of cat a selector allows and denies.
func (a *aclState) countCategory(s *aclSelector, cat uint32) (on, off int) {
	for _, c := range a.cmds {
		if c.acl.cats&cat != 0 {
			if s.bit(c.acl.id) {
				on++
			} else {
				off++
			}
		}
	}
	return on, off
}

// singleCommandRules adds +cmd / -cmd rules until fake's bits are s's, and the
// +cmd|firstarg rules.
func (a *aclState) singleCommandRules(s, fake *aclSelector, rules []string) []string {
	for _, c := range a.cmds {
		user, have := s.bit(c.acl.id), fake.bit(c.acl.id)
		if user != have {
			if user {
				rules = append(rules, "+"+c.name)
			} else {
				rules = append(rules, "-"+c.name)
			}
			if strings.IndexByte(c.name, '|') < 0 {
				a.changePerm(fake, c, user)
			} else {
				fake.setBit(c.acl.id, user)
			}
		}
		if !user {
			for _, arg := range s.firstArgs[c.acl.id] {
				rules = append(rules, "+"+c.name+"|"+arg)
			}
		}
	}
	return rules
}
