package server

import (
	"context"
	"net/http"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/openapi"
	"github.com/voiceapi/voiceapi/validate"
)

// routeQuery is what a route declares of its query string, read from its OpenAPI
// description (openapi.Declared) so that the check and the document never differ.
type routeQuery struct {
	// params are the declared names, each true when it may be repeated.
	params map[string]bool
	// inHandler: the route reads its query or a body, so its handler reports the
	// undeclared parameters with the other faults of the request (pageRequest,
	// decodeInput, decodeBody, the query-reading handlers); any other route refuses them
	// before its handler runs.
	inHandler bool
}

func declaredQuery(method, path string) routeQuery {
	params, body := openapi.Declared(method, path)
	return routeQuery{params: params, inHandler: body || len(params) > 0}
}

type queryFaultsKey struct{}

// checkQuery refuses r when its query holds a parameter the route does not declare (or
// a scalar one twice; conventions §1), or, when the route's handler reports such faults
// itself, returns r carrying them for queryFaults.
func checkQuery(rt route, r *http.Request) (*http.Request, error) {
	if r.URL.RawQuery == "" {
		return r, nil
	}
	faults := validate.KnownQuery(r.URL.RawQuery, rt.query.params)
	if faults == nil {
		return r, nil
	}
	if !rt.query.inHandler || validate.QueryHoldsNUL(r.URL.RawQuery) {
		return r, faults
	}
	return r.WithContext(context.WithValue(r.Context(), queryFaultsKey{}, faults)), nil
}

// queryFaults returns the faults checkQuery found in r's query, nil when none: a handler
// reading its query or body adds them to its own, so that one 422 names every fault.
func queryFaults(r *http.Request) error {
	err, _ := r.Context().Value(queryFaultsKey{}).(error)
	return err
}

// withQueryFaults adds the faults of r's query to err, so that a 422 on a list's
// per_page, filter or cursor, or on a body, names them too: err itself when r's query
// has none or err is not a validation failure, the faults alone when err is nil.
func withQueryFaults(r *http.Request, err error) error {
	faults, _ := queryFaults(r).(*data.Error)
	if faults == nil {
		return err
	}
	if err == nil {
		return faults
	}
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID {
		return err
	}
	// err's faults keep their order after the query's (a body's rules read the order: a
	// member given twice inside an unknown one is named only when it comes first), under
	// the one bound of data.Faults.
	var all data.Faults
	all.AddError(faults)
	for _, p := range e.FieldPaths() {
		if !all.Has(p) {
			for _, m := range e.Fields[p] {
				all.Add(p, m)
			}
		}
	}
	all.Omit(e.Omitted())
	return all.Err()
}

// refuseSuccess answers the query's faults in place of a success: a read whose query
// holds undeclared parameters runs, so that its 422 names every fault of the request
// (its cursor is checked by storage), but its result is never sent. Reads only: a write
// must refuse before it acts, which decodeInput sees to.
type refuseSuccess struct {
	http.ResponseWriter
	s *Server
	r *http.Request
	// wrote: a status went out; refused: it was the query's 422, and what the handler
	// writes after it is dropped.
	wrote, refused bool
}

func (g *refuseSuccess) WriteHeader(status int) {
	if g.wrote {
		return
	}
	g.wrote = true
	if status >= http.StatusBadRequest {
		g.ResponseWriter.WriteHeader(status)
		return
	}
	g.refused = true
	for _, h := range []string{"Content-Length", "Content-Disposition", "ETag", "Last-Modified", "Cache-Control"} {
		g.Header().Del(h)
	}
	g.s.writeError(g.ResponseWriter, g.r, queryFaults(g.r))
}

func (g *refuseSuccess) Write(b []byte) (int, error) {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	if g.refused {
		return len(b), nil
	}
	return g.ResponseWriter.Write(b)
}

func (g *refuseSuccess) Unwrap() http.ResponseWriter { return g.ResponseWriter }
