package httpapi

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API's contract, openapi.yaml (OpenAPI 3.1), served at
// /openapi.yaml; openapi_test.go holds the server to it.
//
//go:embed openapi.yaml
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(OpenAPI)
}
