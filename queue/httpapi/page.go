package httpapi

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"waitroom/queue"
)

// The waiting-room page and its assets are embedded in the binary and served
// from this origin only. The one thing from elsewhere a page may show is its
// queue's logo: the page's Content-Security-Policy names exactly that image
// (queue.Branding.LogoSource), nothing else from its origin. The queue's
// colours come as a stylesheet of this origin, /q/{q}/theme.css, so the
// policy needs no inline styles.

//go:embed web
var webFS embed.FS

var (
	pages = template.Must(template.New("").Funcs(template.FuncMap{"fill": fill}).
		ParseFS(webFS, "web/room.html", "web/index.html", "web/admin.html"))
	assets = func() http.Handler {
		sub, err := fs.Sub(webFS, "web")
		if err != nil {
			panic(err)
		}
		return http.FileServerFS(sub)
	}()
)

// pageHeaders keep the page to its own origin; imgSrc adds one image source
// (a queue's logo) to the policy.
func pageHeaders(w http.ResponseWriter, imgSrc string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	img := "'self' data:"
	if imgSrc != "" {
		img += " " + imgSrc
	}
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; "+
		"connect-src 'self'; img-src "+img+"; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
}

func render(w http.ResponseWriter, status int, name string, data any) {
	renderWith(w, status, name, data, "")
}

func renderWith(w http.ResponseWriter, status int, name string, data any, imgSrc string) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	pageHeaders(w, imgSrc)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// pageData is what room.html and index.html are filled with.
type pageData struct {
	Lang  string
	T     catalog
	Langs []langLink
	// Script is the catalog as JSON, for the page's script.
	Script string

	// room.html
	Queue string
	Title string // the queue's branded title, or its name
	Logo  string // the logo's URL, "" for none
	Theme string // the queue's stylesheet, "" without colours

	// index.html
	Queues   []string
	Instance string
	Missing  string
}

// langLink is one entry of the language switcher.
type langLink struct {
	Code, Name, Href string
	Current          bool
}

// localized picks the request's language (remembering a switcher's choice)
// and fills the language part of the page's data.
func localized(w http.ResponseWriter, r *http.Request) pageData {
	code, chosen := pageLanguage(r)
	if chosen {
		rememberLanguage(w, r, code)
	}
	w.Header().Add("Vary", "Accept-Language, Cookie")
	d := pageData{Lang: code, T: catalogs[code]}
	for _, l := range languages {
		d.Langs = append(d.Langs, langLink{Code: l.Code, Name: l.Name, Href: "?" + langParam + "=" + l.Code,
			Current: l.Code == code})
	}
	js, _ := json.Marshal(d.T)
	d.Script = string(js)
	return d
}

// page: GET /q/{q}, the waiting room a person sees, in their language and
// the queue's branding.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("q")
	d := localized(w, r)
	rm := s.lookup(name)
	if rm == nil {
		d.Queues, d.Missing = s.table().names, name
		render(w, http.StatusNotFound, "index.html", d)
		return
	}
	b := s.branding(r, rm)
	d.Queue, d.Title = name, name
	if b.Title != "" && queue.ValidTitle(b.Title) == nil {
		d.Title = b.Title
	}
	src := b.LogoSource()
	if src != "" {
		d.Logo = b.LogoURL
	}
	if themeCSS(b) != "" {
		d.Theme = "/q/" + name + "/theme.css?v=" + themeVersion(b)
	}
	renderWith(w, http.StatusOK, "room.html", d, src)
}

// theme: GET /q/{q}/theme.css, the queue's colours as CSS custom properties
// (empty without colours).
func (s *Server) theme(w http.ResponseWriter, r *http.Request) {
	rm, ok := s.room(w, r)
	if !ok {
		return
	}
	css := themeCSS(s.branding(r, rm))
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write([]byte(css))
}

// pageStoreWait bounds how long a page view waits for the store.
const pageStoreWait = 500 * time.Millisecond

// branding is the queue's branding for its page: as read at most one period
// ago, or as last read when the store does not answer within pageStoreWait
// (the page is drawn all the same, and says itself that it cannot join).
func (s *Server) branding(r *http.Request, rm *room) queue.Branding {
	ctx, cancel := context.WithTimeout(r.Context(), min(s.cfg.StoreTimeout, pageStoreWait))
	defer cancel()
	return rm.eng.CurrentSettings(ctx).Branding
}

// themeCSS is the stylesheet of a queue's colours; a colour that is not a
// valid hex colour (the store edited by hand) is left out.
func themeCSS(b queue.Branding) string {
	var sb strings.Builder
	if c, ok := parseHex(b.PrimaryColor); ok {
		fmt.Fprintf(&sb, "  --accent: %s;\n  --accent-soft: color-mix(in srgb, %s 22%%, transparent);\n  --on-accent: %s;\n",
			c, c, readableOn(c))
	}
	if c, ok := parseHex(b.BackgroundColor); ok {
		fmt.Fprintf(&sb, "  --page: %s;\n  --on-page: %s;\n", c, readableOn(c))
	}
	if sb.Len() == 0 {
		return ""
	}
	return "/* the queue's colours (PUT /v1/queues/{q}: primary_color, background_color) */\n:root {\n" + sb.String() + "}\n"
}

// themeVersion changes with the colours, so a browser fetches the new
// stylesheet when they change.
func themeVersion(b queue.Branding) string {
	v := strings.TrimPrefix(b.PrimaryColor+b.BackgroundColor, "#")
	return strings.ReplaceAll(v, "#", "-")
}

// parseHex normalises a #rgb or #rrggbb colour to lower-case #rrggbb.
func parseHex(s string) (string, bool) {
	if s == "" || queue.ValidColor(s) != nil {
		return "", false
	}
	s = strings.ToLower(s[1:])
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	return "#" + s, true
}

// readableOn picks near-black or white text, whichever contrasts more with
// the #rrggbb background (WCAG relative luminance).
func readableOn(hex string) string {
	lum := 0.0
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(v) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		lum += w * c
	}
	const darkLum = 0.0056 // #111111
	if (1.05)/(lum+0.05) >= (lum+0.05)/(darkLum+0.05) {
		return "#ffffff"
	}
	return "#111111"
}

// index: GET /, links to every waiting room of this instance.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	d := localized(w, r)
	tab := s.table()
	if len(tab.names) > 0 {
		d.Instance = tab.rooms[tab.names[0]].eng.InstanceID()
	}
	d.Queues = tab.names
	render(w, http.StatusOK, "index.html", d)
}

// asset: GET /assets/{file}, the page's stylesheet and script.
func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	switch r.PathValue("file") {
	case "room.css", "room.js", "i18n.js", "pow.js", "admin.css", "admin.js":
	default:
		writeError(w, http.StatusNotFound, "no such asset")
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + r.PathValue("file")
	assets.ServeHTTP(w, r2)
}

// adminPage: GET /admin, the dashboard. The page itself holds nothing
// secret; it asks for the admin token and sends it with each API call.
func (s *Server) adminPage(w http.ResponseWriter, r *http.Request) {
	render(w, http.StatusOK, "admin.html", nil)
}
