// Package envflag lets every command-line flag also come from an environment
// variable: --redis-url is QUEUE_REDIS_URL for prefix "QUEUE". A flag given
// on the command line wins over the environment, which wins over the default.
package envflag

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// Name is the environment variable of flag name under prefix.
func Name(prefix, name string) string {
	return prefix + "_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Parse parses args into fs, then fills every flag not given on the command
// line from its environment variable (looked up with getenv, os.Getenv when
// nil). The usage text names each variable.
func Parse(fs *flag.FlagSet, prefix string, args []string, getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	usage := fs.Usage
	fs.Usage = func() {
		if usage != nil {
			usage()
		}
		fmt.Fprintf(fs.Output(), "\nEvery flag can also be set by an environment variable: --some-flag is %s.\n", Name(prefix, "some-flag"))
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		env := Name(prefix, f.Name)
		if v := getenv(env); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %v", env, v, e)
			}
		}
	})
	return err
}
