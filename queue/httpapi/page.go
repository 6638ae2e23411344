package httpapi

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
)

// The waiting-room page and its assets are embedded in the binary and served
// from this origin only; the page needs nothing from elsewhere.

//go:embed web
var webFS embed.FS

var (
	pages  = template.Must(template.ParseFS(webFS, "web/room.html", "web/index.html", "web/admin.html"))
	assets = func() http.Handler {
		sub, err := fs.Sub(webFS, "web")
		if err != nil {
			panic(err)
		}
		return http.FileServerFS(sub)
	}()
)

// pageHeaders keep the page to its own origin.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; "+
		"connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
}

func render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	pageHeaders(w)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

type indexData struct {
	Queues   []string
	Instance string
	Missing  string
}

// page: GET /q/{q}, the waiting room a person sees.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("q")
	if s.lookup(name) == nil {
		render(w, http.StatusNotFound, "index.html", indexData{Queues: s.table().names, Missing: name})
		return
	}
	render(w, http.StatusOK, "room.html", struct{ Queue string }{name})
}

// index: GET /, links to every waiting room of this instance.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	inst := ""
	tab := s.table()
	if len(tab.names) > 0 {
		inst = tab.rooms[tab.names[0]].eng.InstanceID()
	}
	render(w, http.StatusOK, "index.html", indexData{Queues: tab.names, Instance: inst})
}

// asset: GET /assets/{file}, the page's stylesheet and script.
func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	switch r.PathValue("file") {
	case "room.css", "room.js", "pow.js", "admin.css", "admin.js":
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
