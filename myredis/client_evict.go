package myredis

// CLIENT NO-EVICT ON|OFF: c is exempt from client eviction (maxmemory-clients).
func (x *Ctx) clientNoEvict() {
	switch {
	case eqFold(x.args[2], "on"):
		x.c.noEvict = true
	case eqFold(x.args[2], "off"):
		x.c.noEvict = false
	default:
		x.err(msgSyntax)
		return
	}
	x.ok()
}
