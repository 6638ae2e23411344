package queue

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBrandingValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		b    Branding
		err  error // nil: valid
	}{
		{"empty", Branding{}, nil},
		{"all", Branding{Title: "봄 콘서트 · 春のコンサート", LogoURL: "https://cdn.example.com/logo.png?v=2",
			PrimaryColor: "#E4002B", BackgroundColor: "#fff"}, nil},
		{"http logo with port", Branding{LogoURL: "http://127.0.0.1:8080/l.svg"}, nil},
		{"long title", Branding{Title: strings.Repeat("가", 41)}, ErrBadTitle}, // 123 bytes
		{"control in title", Branding{Title: "a\nb"}, ErrBadTitle},
		{"bad utf-8 title", Branding{Title: "\xff"}, ErrBadTitle},
		{"javascript logo", Branding{LogoURL: "javascript:alert(1)"}, ErrBadLogoURL},
		{"data logo", Branding{LogoURL: "data:image/png;base64,AAAA"}, ErrBadLogoURL},
		{"relative logo", Branding{LogoURL: "/logo.png"}, ErrBadLogoURL},
		{"scheme-relative logo", Branding{LogoURL: "//cdn.example.com/logo.png"}, ErrBadLogoURL},
		{"ftp logo", Branding{LogoURL: "ftp://example.com/logo.png"}, ErrBadLogoURL},
		{"user info", Branding{LogoURL: "https://u:p@example.com/logo.png"}, ErrBadLogoURL},
		{"space in logo", Branding{LogoURL: "https://example.com/a b.png"}, ErrBadLogoURL},
		{"quote in logo", Branding{LogoURL: "https://example.com/a'.png"}, ErrBadLogoURL},
		{"no host", Branding{LogoURL: "https:///logo.png"}, ErrBadLogoURL},
		{"named colour", Branding{PrimaryColor: "red"}, ErrBadColor},
		{"no hash", Branding{PrimaryColor: "ff0000"}, ErrBadColor},
		{"four digits", Branding{BackgroundColor: "#ffff"}, ErrBadColor},
		{"css injection", Branding{BackgroundColor: "#fff;}body{display:none"}, ErrBadColor},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.b.Validate()
			if c.err == nil {
				require.NoError(t, err)
				return
			}
			require.True(t, errors.Is(err, c.err), "got %v, want %v", err, c.err)
		})
	}
	err := Branding{BackgroundColor: "blue"}.Validate()
	require.EqualError(t, err, "background_color "+ErrBadColor.Error(), "the error names the field")
}

func TestLogoSource(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "",
		"https://cdn.example.com/logo.png?v=2#x": "https://cdn.example.com/logo.png",
		"http://127.0.0.1:9000/a;b,c.png":        "http://127.0.0.1:9000/a%3Bb%2Cc.png",
		"https://cdn.example.com":                "https://cdn.example.com/",
		"https://cdn.example.com/%E3%83%AD%E3%82%B4": "https://cdn.example.com/%E3%83%AD%E3%82%B4",
		"javascript:alert(1)":                        "",
	} {
		require.Equal(t, want, Branding{LogoURL: in}.LogoSource(), in)
	}
}

// TestBrandingStored: the branding round-trips through the store, a patch
// writes only its fields, "" removes a field for good (a default from the
// flags does not come back), and a bad value changes nothing.
func TestBrandingStored(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(2)
		defer rdb.Close()
		q := testQueue(t)
		def := Branding{Title: "From the flags", PrimaryColor: "#123456"}
		e := newEngine(t, rdb, q, Options{Defaults: Settings{Branding: def}})
		s, err := e.Settings(bg)
		require.NoError(t, err)
		require.Equal(t, def, s.Branding)

		s, err = e.SetSettingFields(bg, SettingsPatch{Branding: BrandingPatch{
			LogoURL: ptr("https://cdn.example.com/l.png"), BackgroundColor: ptr("#fafafa")}})
		require.NoError(t, err)
		require.Equal(t, Branding{Title: "From the flags", LogoURL: "https://cdn.example.com/l.png",
			PrimaryColor: "#123456", BackgroundColor: "#fafafa"}, s.Branding)

		s, err = e.SetSettingFields(bg, SettingsPatch{Branding: BrandingPatch{Title: ptr("")}})
		require.NoError(t, err)
		require.Equal(t, "", s.Branding.Title)

		_, err = e.SetSettingFields(bg, SettingsPatch{Slot: ptr(7), Branding: BrandingPatch{PrimaryColor: ptr("red")}})
		require.ErrorIs(t, err, ErrBadSettings)
		require.ErrorIs(t, err, ErrBadColor)

		// Another instance starting with the flags' defaults keeps the store's.
		e2 := newEngine(t, rdb, q, Options{Defaults: Settings{Branding: def}})
		s, err = e2.Settings(bg)
		require.NoError(t, err)
		require.Equal(t, "", s.Branding.Title, "a removed title stays removed")
		require.Equal(t, "#123456", s.Branding.PrimaryColor)
		require.Equal(t, "#fafafa", s.Branding.BackgroundColor)
		require.NotEqual(t, 7, s.Slot, "the bad patch wrote nothing")
	})
}
