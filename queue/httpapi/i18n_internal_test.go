package httpapi

import (
	"maps"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNegotiateLanguage(t *testing.T) {
	for _, c := range []struct{ header, want string }{
		{"", "en"},
		{"ko", "ko"},
		{"ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7", "ko"},
		{"ja-JP", "ja"},
		{"JA-jp", "ja"},
		{"en-GB,en;q=0.9", "en"},
		{"fr-FR,fr;q=0.9", "en"},                 // nothing we have: English
		{"fr;q=1, ja;q=0.5, ko;q=0.6", "ko"},     // the highest weight we have
		{"en;q=0.5, ja;q=0.500, ko;q=0.5", "en"}, // a tie goes to the first listed
		{"ja;q=0.5, en;q=0.5", "ja"},             //   whichever it is
		{"ja;q=0, ko;q=0.1", "ko"},               // q=0: not this one
		{"ja;q=0", "en"},                         // nothing acceptable named: English
		{"*", "en"},                              // anything: the first of ours
		{"*;q=0.5, en;q=0", "ko"},                // anything but English
		{"ko-KR;q=0.2, ja;q=0.3, *;q=0.9", "en"}, // the wildcard only counts for languages not named
		{"zh-Hant-TW, ja;q=0.1", "ja"},           // subtags
		{"ja;q=1.0, ko;q=1.001", "ja"},           // q above 1 is malformed: skipped
		{"ja;q=0.5, ko;q=.9", "ja"},              // ".9" is not a qvalue
		{"ja;q=0.5, ko;q=0.9999", "ja"},          // four decimals are not either
		{"ko;level=1, ja;q=0.1", "ja"},           // only q is a parameter here
		{"ko_KR, ja;q=0.2", "ja"},                // not a language range
		{"123, ko;q=0.2", "ko"},                  // a range starts with letters
		{" ja ; q = 0.8 , ko ; q=0.7", "ja"},     // optional whitespace
		{"ko;q=0.", "en"},                        // "0." is a qvalue: 0
	} {
		assert.Equal(t, c.want, negotiate([]string{c.header}), "Accept-Language: %q", c.header)
	}
	// Several header lines are one list.
	assert.Equal(t, "ja", negotiate([]string{"fr", "ja;q=0.4, en;q=0.3"}))
}

func TestParseQValue(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "0.": 0, "0.5": 500, "0.25": 250, "0.125": 125, "1": 1000, "1.": 1000, "1.000": 1000} {
		got, ok := parseQValue(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "2", "1.5", "1.0001", "0.1234", "-0", "0.a", ".5", "01", "0,5"} {
		_, ok := parseQValue(in)
		assert.False(t, ok, in)
	}
}

// TestPageLanguageOrder: ?lang= wins over the cookie, which wins over
// Accept-Language; unknown values fall through.
func TestPageLanguageOrder(t *testing.T) {
	for _, c := range []struct {
		query, cookie, header string
		want                  string
		param                 bool
	}{
		{"", "", "ja", "ja", false},
		{"", "ko", "ja", "ko", false},
		{"lang=ja", "ko", "en", "ja", true},
		{"lang=JA", "", "", "ja", true},
		{"lang=fr", "ko", "ja", "ko", false},
		{"", "xx", "ko-KR", "ko", false},
		{"", "", "", "en", false},
	} {
		r := httptest.NewRequest("GET", "/q/x?"+c.query, nil)
		if c.cookie != "" {
			r.Header.Set("Cookie", langCookie+"="+c.cookie)
		}
		if c.header != "" {
			r.Header.Set("Accept-Language", c.header)
		}
		got, param := pageLanguage(r)
		assert.Equal(t, c.want, got, "%+v", c)
		assert.Equal(t, c.param, param, "%+v", c)
	}
}

func FuzzAcceptLanguage(f *testing.F) {
	for _, s := range []string{"ko-KR,ko;q=0.9", "*;q=0.5, en;q=0", "ja;q=1.000", ";;;,,,q=", "ko;q=0.", "x-y-z;Q=0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got := negotiate([]string{h})
		if !supported(got) {
			t.Fatalf("negotiate(%q) = %q, not a page language", h, got)
		}
		for _, r := range parseAcceptLanguage([]string{h}) {
			if r.q < 0 || r.q > 1000 || !validRange(r.tag) {
				t.Fatalf("%q: bad range %+v", h, r)
			}
		}
	})
}

// TestCatalogs: every language has every string, none empty or left in
// English by mistake, and every key the page's template and script use exists.
func TestCatalogs(t *testing.T) {
	en := catalogs["en"]
	keys := slices.Sorted(maps.Keys(en))
	for _, l := range languages {
		c := catalogs[l.Code]
		require.NotNil(t, c, l.Code)
		assert.Equal(t, keys, slices.Sorted(maps.Keys(c)), "%s has the same keys as en", l.Code)
		for k, v := range c {
			assert.NotEmpty(t, strings.TrimSpace(v), "%s.%s", l.Code, k)
			if l.Code != "en" && k != "eta_hm" && k != "unit_display" && k != "unit_spacing" && !strings.HasPrefix(v, "{") {
				assert.NotEqual(t, en[k], v, "%s.%s is the English text", l.Code, k)
			}
			assert.Equal(t, placeholders(en[k]), placeholders(v), "%s.%s keeps the placeholders", l.Code, k)
		}
	}
	used := map[string]bool{}
	for _, file := range []string{"web/room.html", "web/index.html"} {
		b, err := webFS.ReadFile(file)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`\.T\.(\w+)`).FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
	}
	for _, file := range []string{"web/room.js", "web/i18n.js"} {
		b, err := webFS.ReadFile(file)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`\bt\("(\w+)"`).FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
	}
	require.Greater(t, len(used), 30, "the scan found the page's keys")
	for k := range used {
		assert.Contains(t, en, k, "the page uses %q", k)
	}
}

func placeholders(s string) []string {
	m := regexp.MustCompile(`\{\w+\}`).FindAllString(s, -1)
	slices.Sort(m)
	return m
}
