package queue

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Branding is how a queue's page looks: its title, a logo and two colours.
// Empty fields use the page's own (the queue's name, no logo, the default
// colours). The fields live in the queue's settings hash like the rest, so
// every instance's page shows the same.
type Branding struct {
	Title           string // the page's heading and window title
	LogoURL         string // absolute http(s) URL of an image
	PrimaryColor    string // #rgb or #rrggbb: buttons, progress bar, links
	BackgroundColor string // #rgb or #rrggbb: the page behind the card
}

// Limits of the branding fields.
const (
	MaxTitleLen   = 120  // bytes
	MaxLogoURLLen = 2048 // bytes
)

// Branding errors; the HTTP layer answers 400 with their text.
var (
	ErrBadTitle   = fmt.Errorf("title must be valid UTF-8 of at most %d bytes without control characters", MaxTitleLen)
	ErrBadLogoURL = fmt.Errorf("logo_url must be an absolute http or https URL with a host, no user info, at most %d bytes (or \"\" to remove it)", MaxLogoURLLen)
	ErrBadColor   = errors.New("must be a hex colour #rgb or #rrggbb (or \"\" for the default)")
)

var hexColor = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// ValidTitle checks a page title.
func ValidTitle(s string) error {
	if len(s) > MaxTitleLen || !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ErrBadTitle
	}
	return nil
}

// ValidLogoURL checks a logo URL: "" or an absolute http(s) URL. The page's
// Content-Security-Policy lets exactly that URL in (LogoSource).
func ValidLogoURL(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxLogoURLLen || strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r == 0x7f || r == '\'' || r == '"' }) {
		return ErrBadLogoURL
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" {
		return ErrBadLogoURL
	}
	if u.Hostname() == "" || strings.ContainsAny(u.Host, ";,") {
		return ErrBadLogoURL
	}
	return nil
}

// ValidColor checks a colour: "" or #rgb / #rrggbb.
func ValidColor(s string) error {
	if s == "" || hexColor.MatchString(s) {
		return nil
	}
	return ErrBadColor
}

// Validate checks every field; the error names the field.
func (b Branding) Validate() error {
	if err := ValidTitle(b.Title); err != nil {
		return err
	}
	if err := ValidLogoURL(b.LogoURL); err != nil {
		return err
	}
	if err := ValidColor(b.PrimaryColor); err != nil {
		return fmt.Errorf("primary_color %w", err)
	}
	if err := ValidColor(b.BackgroundColor); err != nil {
		return fmt.Errorf("background_color %w", err)
	}
	return nil
}

// LogoSource is the logo URL as a Content-Security-Policy source expression
// that allows exactly that image: scheme, host, port and path (a query is
// not part of a source expression; ';' and ',' in the path are
// percent-encoded, which the policy's matching decodes). "" without a logo.
func (b Branding) LogoSource() string {
	if b.LogoURL == "" || ValidLogoURL(b.LogoURL) != nil {
		return ""
	}
	u, _ := url.Parse(b.LogoURL)
	path := strings.NewReplacer(";", "%3B", ",", "%2C").Replace(u.EscapedPath())
	if path == "" {
		path = "/"
	}
	return u.Scheme + "://" + u.Host + path
}

// brandFields are the settings hash's fields of the branding, in order.
var brandFields = [...]string{"title", "logo_url", "primary_color", "background_color"}

func (b *Branding) fields() [len(brandFields)]*string {
	return [...]*string{&b.Title, &b.LogoURL, &b.PrimaryColor, &b.BackgroundColor}
}

// BrandingPatch changes some of the branding; nil fields keep the store's
// value, "" removes one (stored as "", so a default from the flags does not
// come back).
type BrandingPatch struct {
	Title, LogoURL, PrimaryColor, BackgroundColor *string
}

func (p BrandingPatch) fields() [len(brandFields)]*string {
	return [...]*string{p.Title, p.LogoURL, p.PrimaryColor, p.BackgroundColor}
}

// apply returns b with the patch's fields set.
func (p BrandingPatch) apply(b Branding) Branding {
	dst := b.fields()
	for i, v := range p.fields() {
		if v != nil {
			*dst[i] = *v
		}
	}
	return b
}

// hset appends the patch's fields as HSET arguments.
func (p BrandingPatch) hset(args []any) []any {
	for i, v := range p.fields() {
		if v != nil {
			args = append(args, brandFields[i], *v)
		}
	}
	return args
}

// parseBranding reads the branding from the settings hash; a field the hash
// lacks keeps the default's.
func parseBranding(m map[string]string, def Branding) Branding {
	dst := def.fields()
	for i, f := range brandFields {
		if v, ok := m[f]; ok {
			*dst[i] = v
		}
	}
	return def
}
