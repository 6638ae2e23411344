package httpapi

import "waitroom/queue"

// A queue's branding through the admin API: PUT /v1/queues/{q} and POST
// /v1/queues take title, logo_url, primary_color and background_color
// (each "" removes it); GET /v1/queues/{q} shows them. The page uses them
// (page.go).

// brandingRequest is the branding part of a settings change.
type brandingRequest struct {
	Title           *string `json:"title"`
	LogoURL         *string `json:"logo_url"`
	PrimaryColor    *string `json:"primary_color"`
	BackgroundColor *string `json:"background_color"`
}

// patch validates the fields given; the error, answered as 400, names the
// field and what it must be.
func (b brandingRequest) patch() (queue.BrandingPatch, error) {
	p := queue.BrandingPatch{Title: b.Title, LogoURL: b.LogoURL, PrimaryColor: b.PrimaryColor,
		BackgroundColor: b.BackgroundColor}
	var check queue.Branding
	for _, f := range []struct {
		v   *string
		dst *string
	}{{b.Title, &check.Title}, {b.LogoURL, &check.LogoURL}, {b.PrimaryColor, &check.PrimaryColor},
		{b.BackgroundColor, &check.BackgroundColor}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return p, check.Validate()
}

// brandingBody is the branding part of a queue's description.
type brandingBody struct {
	Title           string `json:"title"`
	LogoURL         string `json:"logo_url"`
	PrimaryColor    string `json:"primary_color"`
	BackgroundColor string `json:"background_color"`
}
