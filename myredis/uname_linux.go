package myredis

import "syscall"

// unameString is INFO's os: the kernel's name, release and machine, as
// Redis prints uname(2)'s sysname, release and machine ("Linux 6.1.0 x86_64").
func unameString() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "Linux"
	}
	return utsField(u.Sysname[:]) + " " + utsField(u.Release[:]) + " " + utsField(u.Machine[:])
}

// utsField is a NUL-terminated Utsname field (int8 on some architectures,
// uint8 on others).
func utsField[T int8 | uint8](f []T) string {
	b := make([]byte, 0, len(f))
	for _, c := range f {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
