package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"waitroom/queue"
)

// queueSpec is one --queue: a name and the settings that differ from the
// global flags.
//
//	--queue tickets
//	--queue "concert:slot=50,session=3m,ticket-ttl=2m,max-session=20m,strategy=optimistic,period=100ms,join-rate=30,join-key=K,target-url=https://shop.example/checkout"
//	--queue "concert:title=Spring%20Concert,logo-url=https://cdn.example/logo.png,primary-color=#e4002b,background-color=#fff5f5"
//
// The flag repeats; in QUEUE_QUEUE several specs are separated by ';' or
// whitespace. The page's branding (title, logo-url, primary-color,
// background-color) is a default like slot: written to the store only when
// it has none, changed later through the admin API. The title is
// percent-decoded (%20 for a space, %2C for a comma).
type queueSpec struct {
	name       string
	slot       int
	session    time.Duration
	ticketTTL  time.Duration
	maxSession time.Duration
	period     time.Duration
	joinKey    string
	joinRate   int
	strategy   queue.Strategy
	targetURL  string
	branding   queue.Branding
	set        map[string]bool // the keys given in the spec
}

type queueList []queueSpec

func (l *queueList) String() string {
	names := make([]string, len(*l))
	for i, q := range *l {
		names[i] = q.name
	}
	return strings.Join(names, ";")
}

func (l *queueList) Set(v string) error {
	for _, s := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ' ' || r == '\n' || r == '\t' }) {
		spec, err := parseQueueSpec(s)
		if err != nil {
			return err
		}
		for _, q := range *l {
			if q.name == spec.name {
				return fmt.Errorf("queue %q given twice", spec.name)
			}
		}
		*l = append(*l, spec)
	}
	return nil
}

func parseQueueSpec(s string) (queueSpec, error) {
	name, opts, _ := strings.Cut(s, ":")
	spec := queueSpec{name: name, set: map[string]bool{}}
	if name == "" {
		return spec, fmt.Errorf("queue spec %q: empty name", s)
	}
	if opts == "" {
		return spec, nil
	}
	for _, kv := range strings.Split(opts, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return spec, fmt.Errorf("queue %s: %q is not key=value", name, kv)
		}
		var err error
		switch k {
		case "slot":
			spec.slot, err = strconv.Atoi(v)
			if err == nil && spec.slot < 1 {
				err = fmt.Errorf("must be at least 1")
			}
		case "session":
			spec.session, err = positiveDuration(v)
		case "ticket-ttl":
			spec.ticketTTL, err = positiveDuration(v)
		case "period":
			spec.period, err = positiveDuration(v)
		case "max-session":
			spec.maxSession, err = positiveDuration(v)
		case "join-key":
			spec.joinKey = v
		case "join-rate":
			spec.joinRate, err = strconv.Atoi(v)
			if err == nil && spec.joinRate < 0 {
				err = fmt.Errorf("must be 0 (no limit) or more")
			}
		case "strategy":
			spec.strategy, err = queue.ParseStrategy(v)
		case "target-url":
			spec.targetURL = v
		case "title":
			if spec.branding.Title, err = url.PathUnescape(v); err == nil {
				err = queue.ValidTitle(spec.branding.Title)
			}
		case "logo-url":
			spec.branding.LogoURL, err = v, queue.ValidLogoURL(v)
		case "primary-color":
			spec.branding.PrimaryColor, err = v, queue.ValidColor(v)
		case "background-color":
			spec.branding.BackgroundColor, err = v, queue.ValidColor(v)
		default:
			return spec, fmt.Errorf("queue %s: unknown setting %q (want slot, session, ticket-ttl, max-session, period, strategy, "+
				"join-key, join-rate, target-url, title, logo-url, primary-color, background-color)", name, k)
		}
		if err != nil {
			return spec, fmt.Errorf("queue %s: %s=%s: %v", name, k, v, err)
		}
		spec.set[k] = true
	}
	return spec, nil
}

func positiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err == nil && d <= 0 {
		err = fmt.Errorf("must be positive")
	}
	return d, err
}

// withDefaults fills the settings the spec left out from the global flags.
func (q queueSpec) withDefaults(g globals) queueSpec {
	if !q.set["slot"] {
		q.slot = g.slot
	}
	if !q.set["session"] {
		q.session = g.session
	}
	if !q.set["ticket-ttl"] {
		q.ticketTTL = g.ticketTTL
	}
	if !q.set["period"] {
		q.period = g.period
	}
	if !q.set["max-session"] {
		q.maxSession = g.maxSession
	}
	if !q.set["join-key"] {
		q.joinKey = g.joinKey
	}
	if !q.set["join-rate"] {
		q.joinRate = g.joinRate
	}
	if !q.set["strategy"] {
		q.strategy = g.strategy
	}
	if !q.set["target-url"] {
		q.targetURL = g.targetURL
	}
	return q
}
