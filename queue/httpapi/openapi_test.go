package httpapi_test

// The server against its contract, openapi.yaml: every registered route is
// documented and every documented route registered; every response the tests
// in this package get through env.do is validated against the document
// (status, headers, body schema); and when the whole package ran, every
// status the document names for a route was seen at least once.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/httpapi"
	"waitroom/queue/storetest"
)

var contract struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error

	mu   sync.Mutex
	seen map[string]bool // "GET /v1/queues/{q} 404"
}

func loadContract() (*openapi3.T, routers.Router, error) {
	contract.once.Do(func() {
		for _, ct := range []string{"text/event-stream", "text/html", "text/css", "text/javascript", "application/yaml"} {
			openapi3filter.RegisterBodyDecoder(ct, func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
				b, err := io.ReadAll(r)
				return string(b), err
			})
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(httpapi.OpenAPI)
		if err == nil {
			err = doc.Validate(context.Background())
		}
		if err != nil {
			contract.err = err
			return
		}
		contract.doc = doc
		contract.router, contract.err = gorillamux.NewRouter(doc)
		contract.seen = map[string]bool{}
	})
	return contract.doc, contract.router, contract.err
}

// checkContract validates one exchange against openapi.yaml and records its
// status for the coverage check.
func checkContract(t *testing.T, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	_, router, err := loadContract()
	require.NoError(t, err, "openapi.yaml")
	// the router matches on the documented server: present the request as sent there
	u := *req.URL
	u.Scheme, u.Host = "http", "127.0.0.1:8081"
	r2 := req.Clone(req.Context())
	r2.URL, r2.Host = &u, u.Host
	route, params, err := router.FindRoute(r2)
	if err != nil {
		if resp.StatusCode == http.StatusNotFound && strings.Contains(string(body), "no such route") {
			return // an undocumented path answered 404, as it should
		}
		if resp.StatusCode == http.StatusMethodNotAllowed {
			return // a wrong method on a documented path: checked by TestContractMethods
		}
		t.Errorf("contract: %s %s (%d) matches no documented route: %v", req.Method, req.URL.Path, resp.StatusCode, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r2, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(req.Context(), in); err != nil {
		t.Errorf("contract: %s %s answered %d, not as openapi.yaml says: %v\nbody: %.300s", req.Method, route.Path, resp.StatusCode, err, body)
	}
	contract.mu.Lock()
	contract.seen[fmt.Sprintf("%s %s %d", route.Method, route.Path, resp.StatusCode)] = true
	contract.mu.Unlock()
}

// documentedStatuses lists "METHOD path status" for every response in the document.
func documentedStatuses(doc *openapi3.T) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				out = append(out, fmt.Sprintf("%s %s %s", method, path, status))
			}
		}
	}
	sort.Strings(out)
	return out
}

// coverageExempt are documented statuses no test in this package produces,
// each with the reason; the list keeps the check honest rather than silent.
var coverageExempt = map[string]string{
	"502": "the store answering an error it means: storeStatus maps redis.Error replies to it (TestStoreStatus)",
	"405": "wrong methods are checked for every route by TestContractMethods, which does not go through env.do",
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && contract.doc != nil {
		var missing []string
		for _, s := range documentedStatuses(contract.doc) {
			status := s[strings.LastIndexByte(s, ' ')+1:]
			if _, ok := coverageExempt[status]; ok {
				continue
			}
			if !contract.seen[s] {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "openapi.yaml documents responses no test produced (add a test, or drop them from the document):\n  %s\n",
				strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// TestContractRoutes: the routes the server registers are exactly the documented ones.
func TestContractRoutes(t *testing.T) {
	doc, _, err := loadContract()
	require.NoError(t, err)
	st := storetest.Start(t)
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: uniq("routes")})
	var registered []string
	for _, r := range e.api.Routes() {
		registered = append(registered, r.Method+" "+r.Path)
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	sort.Strings(registered)
	sort.Strings(documented)
	assert.Equal(t, documented, registered)
}

// TestContractMethods: a wrong method on every documented path is the
// documented 405 with an Allow header listing the documented methods.
func TestContractMethods(t *testing.T) {
	doc, _, err := loadContract()
	require.NoError(t, err)
	st := storetest.Start(t)
	q := uniq("methods")
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: q})
	for path, item := range doc.Paths.Map() {
		ops := item.Operations()
		if path == "/" {
			continue // the catch-all: any other method is a 404 JSON error
		}
		concrete := strings.NewReplacer("{q}", q, "{file}", "room.css").Replace(path)
		for _, method := range []string{"GET", "POST", "PUT", "DELETE", "PATCH"} {
			if ops[method] != nil {
				continue
			}
			req, err := http.NewRequest(method, e.ts.URL+concrete, nil)
			require.NoError(t, err)
			resp, err := e.ts.Client().Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s", method, path)
			for m := range ops {
				assert.Contains(t, resp.Header.Get("Allow"), m, "%s %s: Allow", method, path)
			}
			var any405 bool
			for _, op := range ops {
				any405 = any405 || op.Responses.Value("405") != nil
			}
			assert.True(t, any405, "%s documents no 405", path)
		}
	}
}

// TestContractServed: /openapi.yaml is the document.
func TestContractServed(t *testing.T) {
	st := storetest.Start(t)
	e := newEnv(t, st.Addr, envOpt{}, queueConf{name: uniq("served")})
	r := e.do("GET", "/openapi.yaml", "", "")
	require.Equal(t, http.StatusOK, r.code)
	assert.Equal(t, string(httpapi.OpenAPI), r.raw)
	assert.True(t, slices.Contains([]string{"application/yaml"}, r.header.Get("Content-Type")))
}

// TestContractStatuses produces, through env.do (so each is validated
// against the document), the documented answers the other tests reach by
// other paths: unknown queues, oversized bodies, a third event stream on one
// ticket, and a heartbeat while the store is down.
func TestContractStatuses(t *testing.T) {
	st := storetest.Start(t)
	proxy := storetest.NewProxy(t, st.Addr)
	q := uniq("contract")
	e := newEnv(t, proxy.Addr(), envOpt{adminToken: adminToken}, queueConf{name: q, set: queue.Settings{Slot: 1}})
	base := "/v1/queues/" + q
	big := `{"pass":"` + strings.Repeat("x", 5000) + `"}`

	assertError(t, e.do("POST", "/v1/queues/nope/enter", "", `{"pass":"x"}`), 404)
	assertError(t, e.do("POST", "/v1/queues/nope/heartbeat", "x", ""), 404)
	assertError(t, e.do("POST", base+"/enter", "", big), 413)
	assertError(t, e.do("PUT", base, adminToken, `{"slot":1,"x":"`+strings.Repeat("y", 5000)+`"}`), 413)

	tickets := e.fill(q, 2, 1)
	for range 2 {
		s := e.stream(q, tickets[1])
		t.Cleanup(func() { s.Body.Close() })
		require.Equal(t, http.StatusOK, s.StatusCode)
	}
	r := e.do("GET", base+"/events", tickets[1], "")
	assertError(t, r, 429)
	assert.NotEmpty(t, r.header.Get("Retry-After"))

	pass := e.status(q, tickets[0]).str("pass")
	in := e.do("POST", base+"/enter", "", `{"pass":"`+pass+`"}`)
	require.Equal(t, 200, in.code)
	proxy.Down()
	assertError(t, e.do("POST", base+"/heartbeat", in.str("session"), ""), 503)
	proxy.Up()
	assert.Equal(t, 200, e.do("POST", base+"/heartbeat", in.str("session"), "").code)
}
