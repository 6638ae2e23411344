package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"waitroom/queue"
)

// errorBody is every error response: {"error": "..."}, plus the ticket state
// where one applies (an expired ticket is {"state":"expired","error":...}).
type errorBody struct {
	Error  string `json:"error"`
	State  string `json:"state,omitempty"`
	Reason string `json:"reason,omitempty"` // why a ticket is over (see expiredBody)
	// Message is the site's message where the queue's state is the answer
	// (a join refused because the queue closed, a ticket the closing ended).
	Message string `json:"message,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only our own types reach here; they always marshal
		status, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode the response"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, errorBody{Error: fmt.Sprintf(format, args...)})
}

// storeError classifies an error from the store: transient ones (the store is
// down, slow, loading or failing over) are 503 with Retry-After, so clients
// come back and the service recovers by itself when the store returns; an
// error reply the store means (a missing command, a script error) is 502.
func storeStatus(err error) int {
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, p := range []string{"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY"} {
			if strings.HasPrefix(msg, p) {
				return http.StatusServiceUnavailable
			}
		}
		return http.StatusBadGateway
	}
	return http.StatusServiceUnavailable
}

// fail writes the response for an error returned by the engine or the store
// during operation op, and counts store errors.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, op string, err error) {
	switch {
	case errors.Is(err, queue.ErrForged):
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "invalid or foreign token")
	case errors.Is(err, queue.ErrPassUsed):
		writeError(w, http.StatusConflict, "pass already used")
	case errors.Is(err, queue.ErrPassExpired):
		writeJSON(w, http.StatusGone, errorBody{Error: "pass expired: its admission is over or was not confirmed",
			State: "expired", Reason: queue.ReasonSessionOver})
	case errors.Is(err, queue.ErrBadSettings):
		writeError(w, http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "queue: "))
	case r.Context().Err() != nil:
		// The client went away; nobody reads the answer. 499 is nginx's
		// "client closed request", for the access metrics only.
		w.WriteHeader(499)
	default:
		status := storeStatus(err)
		s.metrics.storeErrors.WithLabelValues(op).Inc()
		s.log.Warn("store error", "op", op, "err", err, "status", status)
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", strconv.Itoa(s.retryAfterSeconds()))
			writeError(w, status, "store unavailable, retry later")
			return
		}
		writeError(w, status, "store error")
	}
}

func (s *Server) retryAfterSeconds() int {
	n := int((s.cfg.RetryAfter + 999_999_999) / 1e9)
	if n < 1 {
		n = 1
	}
	return n
}

// decodeBody reads a small JSON object into v. An empty body leaves v as it
// is when allowEmpty. It writes the 4xx itself and returns false on bad input.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) bool {
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	data, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "body larger than %d bytes", s.cfg.MaxBodyBytes)
			return false
		}
		writeError(w, http.StatusBadRequest, "cannot read the body")
		return false
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		if allowEmpty {
			return true
		}
		writeError(w, http.StatusBadRequest, "a JSON body is required")
		return false
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "malformed JSON: %s", jsonProblem(err))
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "malformed JSON: data after the object")
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, "malformed JSON: data after the object")
		return false
	}
	return true
}

// jsonProblem turns a decoder error into a short message without Go type names.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("field %q has the wrong type", te.Field)
		}
		return "expected a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of input"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "cannot parse"
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// ticketID verifies the request's bearer ticket. It writes the 401 itself.
func (s *Server) ticketID(w http.ResponseWriter, r *http.Request, q *room, tok string) (string, bool) {
	if tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="waitroom"`)
		writeError(w, http.StatusUnauthorized, "missing ticket (Authorization: Bearer <ticket>)")
		return "", false
	}
	id, err := q.eng.VerifyTicket(tok)
	if err != nil {
		s.fail(w, r, "verify", err)
		return "", false
	}
	return id, true
}

// withStore bounds one request's store work.
func (s *Server) withStore(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.StoreTimeout)
}
