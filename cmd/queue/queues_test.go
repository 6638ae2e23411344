package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
)

// TestQueueSpecBranding: --queue takes the page's branding, checked as it is
// parsed, the title percent-decoded.
func TestQueueSpecBranding(t *testing.T) {
	spec, err := parseQueueSpec("concert:slot=5,title=Spring%20Concert%2C%20Seoul,logo-url=https://cdn.example/l.png?v=1," +
		"primary-color=#E4002B,background-color=#fff")
	require.NoError(t, err)
	assert.Equal(t, queue.Branding{Title: "Spring Concert, Seoul", LogoURL: "https://cdn.example/l.png?v=1",
		PrimaryColor: "#E4002B", BackgroundColor: "#fff"}, spec.branding)
	assert.Equal(t, 5, spec.slot)

	for _, bad := range []struct{ spec, err string }{
		{"q:primary-color=red", "queue q: primary-color=red: must be a hex colour"},
		{"q:background-color=#12", "queue q: background-color=#12: must be a hex colour"},
		{"q:logo-url=javascript:alert(1)", "queue q: logo-url=javascript:alert(1): logo_url must be an absolute http or https URL"},
		{"q:title=%zz", "queue q: title=%zz: invalid URL escape"},
		{"q:title=a%0Ab", "queue q: title=a%0Ab: title must be valid UTF-8"},
	} {
		_, err := parseQueueSpec(bad.spec)
		require.Error(t, err, bad.spec)
		assert.Contains(t, err.Error(), bad.err)
	}
}
