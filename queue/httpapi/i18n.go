package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The page's languages. Each has a catalog, web/lang/<code>.json, of every
// string the waiting-room and index pages show: the server fills the HTML
// with it, and the page's script gets the same catalog for what it writes
// later. The language comes from, in order: ?lang= (a switcher link, which
// also sets the wr_lang cookie), the wr_lang cookie, Accept-Language, English.

// languages are the page's languages, the fallback first.
var languages = []language{
	{Code: "en", Name: "English"},
	{Code: "ko", Name: "한국어"},
	{Code: "ja", Name: "日本語"},
}

type language struct {
	Code string // BCP 47
	Name string // in its own language, for the switcher
}

const (
	defaultLang = "en"
	langCookie  = "wr_lang"
	langParam   = "lang"
	// langCookieAge is how long a visitor's choice is remembered: a year.
	langCookieAge = 365 * 24 * 3600
)

// catalog is one language's strings, by key.
type catalog map[string]string

var catalogs = func() map[string]catalog {
	out := map[string]catalog{}
	for _, l := range languages {
		b, err := webFS.ReadFile("web/lang/" + l.Code + ".json")
		if err != nil {
			panic(err)
		}
		var c catalog
		if err := json.Unmarshal(b, &c); err != nil {
			panic("web/lang/" + l.Code + ".json: " + err.Error())
		}
		out[l.Code] = c
	}
	return out
}()

// fill replaces {name} placeholders: fill(s, "name", v, ...).
func fill(s string, kv ...string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		s = strings.ReplaceAll(s, "{"+kv[i]+"}", kv[i+1])
	}
	return s
}

func supported(code string) bool {
	return slices.ContainsFunc(languages, func(l language) bool { return l.Code == code })
}

// pageLanguage picks the page's language for r, and whether it came from
// the ?lang= parameter (the caller then remembers it in the cookie).
func pageLanguage(r *http.Request) (code string, fromParam bool) {
	if v := strings.ToLower(r.URL.Query().Get(langParam)); supported(v) {
		return v, true
	}
	if c, err := r.Cookie(langCookie); err == nil && supported(c.Value) {
		return c.Value, false
	}
	return negotiate(r.Header.Values("Accept-Language")), false
}

// rememberLanguage sets the cookie that keeps a visitor's choice.
func rememberLanguage(w http.ResponseWriter, r *http.Request, code string) {
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: code, Path: "/", MaxAge: langCookieAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
}

// langRange is one entry of Accept-Language: a language range and its weight.
type langRange struct {
	tag string // lower case: "ko-kr", "ja", "*"
	q   int    // weight in thousandths, 0-1000
}

// parseAcceptLanguage parses Accept-Language (RFC 9110 12.5.4): ranges
// separated by commas, each with an optional ";q=" weight of at most three
// decimals. Malformed entries are skipped, the rest kept in order.
func parseAcceptLanguage(headers []string) []langRange {
	var out []langRange
	for _, h := range headers {
		for _, part := range strings.Split(h, ",") {
			if lr, ok := parseLangRange(part); ok {
				out = append(out, lr)
			}
		}
	}
	return out
}

func parseLangRange(s string) (langRange, bool) {
	tag, params, _ := strings.Cut(s, ";")
	tag = strings.ToLower(strings.TrimSpace(tag))
	if !validRange(tag) {
		return langRange{}, false
	}
	lr := langRange{tag: tag, q: 1000}
	if params = strings.TrimSpace(params); params != "" {
		name, v, ok := strings.Cut(params, "=")
		if !ok || strings.ToLower(strings.TrimSpace(name)) != "q" {
			return langRange{}, false
		}
		q, ok := parseQValue(strings.TrimSpace(v))
		if !ok {
			return langRange{}, false
		}
		lr.q = q
	}
	return lr, true
}

// validRange: "*" or 1-8 letters followed by "-" and 1-8 alphanumerics, repeated.
func validRange(tag string) bool {
	if tag == "*" {
		return true
	}
	for i, sub := range strings.Split(tag, "-") {
		if len(sub) < 1 || len(sub) > 8 {
			return false
		}
		for _, c := range []byte(sub) {
			letter := c >= 'a' && c <= 'z'
			if !letter && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
	}
	return true
}

// parseQValue parses "0", "0.5", "1", "1.000" (RFC 9110 12.4.2) into
// thousandths.
func parseQValue(s string) (int, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	if (whole != "0" && whole != "1") || len(frac) > 3 {
		return 0, false
	}
	for _, c := range []byte(frac) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n := 0
	if frac != "" {
		n, _ = strconv.Atoi((frac + "00")[:3])
	}
	if whole == "1" {
		if n != 0 {
			return 0, false
		}
		return 1000, true
	}
	return n, true
}

// negotiate picks the supported language the header prefers: each language
// gets the highest weight of the ranges whose primary subtag names it
// ("ko-KR" asks for Korean), or the wildcard's when none does; weight 0
// means "not this one". Ties go to the range listed first. Nothing
// acceptable: English.
func negotiate(headers []string) string {
	ranges := parseAcceptLanguage(headers)
	best, bestQ, bestAt := defaultLang, 0, len(ranges)
	for _, l := range languages {
		q, at, named := 0, len(ranges), false
		for i, r := range ranges {
			primary, _, _ := strings.Cut(r.tag, "-")
			if primary != l.Code {
				continue
			}
			if !named || r.q > q {
				q, at = r.q, i
			}
			named = true
		}
		if !named {
			for i, r := range ranges {
				if r.tag == "*" {
					q, at = r.q, i
					break
				}
			}
		}
		if q > bestQ || (q == bestQ && q > 0 && at < bestAt) {
			best, bestQ, bestAt = l.Code, q, at
		}
	}
	return best
}
