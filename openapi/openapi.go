// Package openapi generates the OpenAPI 3.1 document of the API (conventions §16) from the
// server's route table (Route), the Go types of the bodies and records (schema.go), the
// rules table, which reads validate/'s bounds (rules.go), and the per-route descriptions
// (routes.go). Generating it, rather than writing it by hand, is what keeps it true: a
// route, a field or a bound added in code reaches the document, and Build fails when a
// route has no description.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// Version is the version of the API the document describes (spec: Versioning).
const Version = "1.0.0"

// Route is what the document needs to know of one route of the server's table.
type Route struct {
	Method, Path string
	// Public routes need no token.
	Public bool
	// Need is what the route needs of its caller.
	Need data.Requirement
	// Idempotent routes take an Idempotency-Key; NoBody routes refuse a body.
	Idempotent, NoBody bool
	// OperationID is the route's stable name (its handler's).
	OperationID string
}

// Build returns the document for routes as indented JSON. errorStatus is the server's
// table from error code to HTTP status, whose codes the Error schema lists.
func Build(routes []Route, errorStatus map[string]int) ([]byte, error) {
	doc, err := buildOpenAPI(routes, errorStatus)
	if err != nil {
		return nil, err
	}
	// Examples are derived from the finished document, read back as plain JSON values so
	// that the derivation sees exactly what clients see.
	body, err := marshalDocument(doc)
	if err != nil {
		return nil, err
	}
	var plain map[string]any
	if err := json.Unmarshal(body, &plain); err != nil {
		return nil, fmt.Errorf("openapi: reading back: %w", err)
	}
	if err := withExamples(plain); err != nil {
		return nil, err
	}
	return marshalDocument(plain)
}

// SuccessStatus is the status a route answers on success, as its description says.
func SuccessStatus(method, path string) int {
	if d, ok := opDocs[method+" "+path]; ok && d.Status != 0 {
		return d.Status
	}
	return http.StatusOK
}

// Described lists the routes that have a description ("METHOD path"), for the test that
// none describes a route that no longer exists.
func Described() []string {
	out := make([]string, 0, len(opDocs))
	for k := range opDocs {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func marshalDocument(doc map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<key id>|<secret>" reads better than \u003c
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("openapi: encoding: %w", err)
	}
	return buf.Bytes(), nil
}

// buildOpenAPI describes routes. A route without an entry in opDocs is an error, so a
// forgotten description fails loudly instead of leaving a hole in the document.
func buildOpenAPI(routes []Route, errorStatus map[string]int) (doc map[string]any, err error) {
	defer func() {
		// The schema generator panics on a type or rule it cannot describe: a bug in
		// the tables, reported as an error of the document.
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	g := newSchemaGen()
	for _, rt := range routes {
		d, ok := opDocs[rt.Method+" "+rt.Path]
		if ok && d.Out != nil {
			g.markOutput(reflect.TypeOf(d.Out))
		}
		for _, v := range d.ExtraOut {
			g.markOutput(reflect.TypeOf(v))
		}
	}
	g.markOutput(reflect.TypeFor[data.Page]())
	markEventOutputs(g)
	paths := map[string]map[string]any{}
	var missing []string
	for _, rt := range routes {
		d, ok := opDocs[rt.Method+" "+rt.Path]
		if !ok {
			missing = append(missing, rt.Method+" "+rt.Path)
			continue
		}
		if paths[rt.Path] == nil {
			paths[rt.Path] = map[string]any{}
		}
		paths[rt.Path][strings.ToLower(rt.Method)] = operation(g, rt, d)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("openapi: no description in opDocs for %s", strings.Join(missing, ", "))
	}
	g.ref(reflect.TypeFor[data.Page](), modeOut)
	hooks := webhooks(g)
	components := map[string]any{
		"schemas":         g.components,
		"responses":       errorResponses(),
		"headers":         commonHeaders,
		"parameters":      commonParameters,
		"securitySchemes": map[string]any{"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "description": "A token from POST /api/v1/auth/login or POST /api/v1/api-keys: `<key id>|<secret>`."}},
	}
	g.components["Error"] = errorSchema(errorStatus)
	addConditions(g.components)
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "voiceapi",
			"version":     Version,
			"description": apiDescription,
			"license":     map[string]any{"name": "MIT", "identifier": "MIT"},
		},
		"servers":    []any{map[string]any{"url": "http://127.0.0.1:8080", "description": "voiceapi serve's default address; use your own."}},
		"security":   []any{map[string]any{"bearerAuth": []string{}}},
		"tags":       tagList(),
		"paths":      paths,
		"webhooks":   hooks,
		"components": components,
	}, nil
}

const apiDescription = "A self-hosted control plane for voice AI agents. Every failure has one shape (Error) " +
	"and every response carries X-Request-Id. A known path called with another method is 405 " +
	"method_not_allowed with an Allow header; an unknown path is 404. Lists are cursor-paginated " +
	"(per_page 1 to 100, default 15), newest first. A query parameter the operation does not declare, or a " +
	"parameter not declared as an array given twice, is 422 naming it. See docs/api.md."

// tagNames are the endpoint groups, in the spec's order and then ours.
var tagNames = []string{"Authentication", "API Keys", "Agent", "Agent Versions", "Agent Tests", "Knowledge Base", "Call History",
	"Analytics", "Number", "Subscription", "User", "Webhook", "Workspace", "Workspace User", "Audit Log", "Jobs", "Operations"}

func tagList() []any {
	used := map[string]bool{}
	for _, d := range opDocs {
		used[d.Tag] = true
	}
	// Every tag an operation carries is declared: the listed ones in their order, then
	// any other (a group that did not add itself to tagNames) by name.
	names := slices.Clone(tagNames)
	for _, t := range slices.Sorted(maps.Keys(used)) {
		if !slices.Contains(names, t) {
			names = append(names, t)
		}
	}
	out := []any{}
	for _, t := range names {
		if used[t] {
			out = append(out, map[string]any{"name": t, "description": t + " endpoints."})
		}
	}
	return out
}

var pathParamRe = regexp.MustCompile(`\{([^}]+)\}`)

// operation describes one route.
func operation(g *schemaGen, rt Route, d opDoc) map[string]any {
	op := map[string]any{
		"operationId": rt.OperationID,
		"summary":     d.Summary,
		"tags":        []string{d.Tag},
	}
	if d.Description != "" {
		op["description"] = d.Description
	}
	if rt.Public {
		op["security"] = []any{}
	} else {
		op["x-voiceapi-requires"] = requirementDoc(rt.Need)
	}
	var params []any
	for _, m := range pathParamRe.FindAllStringSubmatch(rt.Path, -1) {
		params = append(params, pathParam(rt.Path, m[1]))
	}
	if d.Shape == shapeList {
		params = append(params, paramRef("PerPage"), paramRef("Cursor"))
	}
	for _, q := range d.Query {
		params = append(params, map[string]any{"name": q.Name, "in": "query", "description": q.Description, "schema": q.Schema})
	}
	for _, h := range d.Headers {
		params = append(params, map[string]any{"name": h.Name, "in": "header", "description": h.Description, "schema": h.Schema})
	}
	ifMatch := rt.Method == http.MethodPut || rt.Method == http.MethodDelete || d.IfMatch
	if ifMatch {
		params = append(params, paramRef("IfMatch"))
	}
	if rt.Idempotent {
		params = append(params, paramRef("IdempotencyKey"))
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if d.Body != nil {
		content := map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(d.Body), modeIn)}}
		if d.Multipart != nil {
			content["multipart/form-data"] = map[string]any{"schema": d.Multipart}
		}
		op["requestBody"] = map[string]any{"required": d.BodyRequired, "content": content}
	}

	responses := map[string]any{}
	status, success := successResponse(g, rt, d)
	responses[fmt.Sprint(status)] = success
	for code, desc := range d.Others {
		responses[fmt.Sprint(code)] = map[string]any{"description": desc}
	}
	for code, desc := range d.AlsoSuccess {
		also := maps.Clone(success)
		also["description"] = desc
		responses[fmt.Sprint(code)] = also
	}
	for _, code := range errorStatuses(rt, d, ifMatch) {
		responses[fmt.Sprint(code)] = map[string]any{"$ref": "#/components/responses/" + errorResponseName[code]}
	}
	op["responses"] = responses
	return op
}

// requirementDoc states what a route needs of its caller, for clients and for the tests
// that derive the access matrix from the document: role, module, scope and the rest.
func requirementDoc(n data.Requirement) map[string]any {
	doc := map[string]any{"workspace_member": n.Workspace, "instance_admin": n.InstanceAdmin,
		"all_agents": n.AllAgents, "every_module": n.EveryModule, "any_key": n.AnyKey, "calls_runtime": n.Runtime}
	if n.MinRole != "" {
		doc["min_role"] = n.MinRole
	}
	if n.Module != "" {
		doc["module"] = n.Module
	}
	if n.Scope != "" {
		doc["scope"] = n.Scope
	}
	return doc
}

// pathParam describes a path parameter; most are opaque string ids (conventions §3).
func pathParam(path, name string) map[string]any {
	schema := map[string]any{"type": "string"}
	desc := "Record id."
	switch {
	case name == "version_number":
		schema, desc = map[string]any{"type": "integer", "minimum": 1}, "Version number of the agent."
	case name == "other":
		schema, desc = map[string]any{"type": "string", "pattern": "^([1-9][0-9]*|current)$"}, "Version number to compare with, or current for the agent as it is now."
	case name == "key_id":
		schema, desc = map[string]any{"type": "integer", "minimum": 1}, "API key id."
	case name == "source_type":
		schema, desc = map[string]any{"type": "string", "enum": []string{"texts", "urls", "files"}}, "Kind of source."
	case strings.HasSuffix(name, "_id"):
		desc = "Id of the " + strings.ReplaceAll(strings.TrimSuffix(name, "_id"), "_", " ") + "."
	}
	return map[string]any{"name": name, "in": "path", "required": true, "description": desc, "schema": schema}
}

func paramRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/parameters/" + name}
}

// successResponse is the route's 2xx response, shaped as its handler writes it.
func successResponse(g *schemaGen, rt Route, d opDoc) (int, map[string]any) {
	status := d.Status
	if status == 0 {
		status = http.StatusOK
		if d.Shape == shapeNone {
			status = http.StatusNoContent
		}
	}
	headers := map[string]any{"X-Request-Id": headerRef("X-Request-Id")}
	// Authenticated routes count against the token's limit; login against its own.
	if !rt.Public || slices.Contains(d.Errors, http.StatusTooManyRequests) {
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			headers[h] = headerRef(h)
		}
	}
	resp := map[string]any{"description": d.Summary + ".", "headers": headers}
	var schema map[string]any
	switch d.Shape {
	case shapeRecord:
		headers["ETag"] = headerRef("ETag")
		props := map[string]any{"data": g.schema(reflect.TypeOf(d.Out), modeOut)}
		required := []string{"data"}
		for name, desc := range d.Extra {
			props[name] = map[string]any{"type": "string", "description": desc}
			required = append(required, name)
		}
		for name, v := range d.ExtraOut {
			props[name] = g.schema(reflect.TypeOf(v), modeOut)
			required = append(required, name)
		}
		slices.Sort(required)
		schema = map[string]any{"type": "object", "required": required, "properties": props}
	case shapeList:
		props := map[string]any{
			"data": map[string]any{"type": "array", "items": g.schema(reflect.TypeOf(d.Out), modeOut)},
			"meta": g.ref(reflect.TypeFor[data.Page](), modeOut),
		}
		required := []string{"data", "meta"}
		for name, v := range d.ExtraOut {
			props[name] = g.schema(reflect.TypeOf(v), modeOut)
			required = append(required, name)
		}
		slices.Sort(required)
		schema = map[string]any{"type": "object", "required": required, "properties": props}
	case shapeData:
		schema = map[string]any{"type": "object", "required": []string{"data"}, "properties": map[string]any{
			"data": g.schema(reflect.TypeOf(d.Out), modeOut),
		}}
	case shapeRaw:
		switch {
		case d.Out != nil:
			schema = g.schema(reflect.TypeOf(d.Out), modeOut)
		case d.Media == "application/json":
			schema = map[string]any{"type": "object"}
		default:
			content := map[string]any{}
			for _, m := range append([]string{d.Media}, d.AltMedia...) {
				media := map[string]any{"schema": rawMediaSchema(m)}
				if d.Example != "" && m == d.Media {
					media["example"] = d.Example
				}
				content[m] = media
			}
			resp["content"] = content
		}
	}
	if schema != nil {
		content := map[string]any{"application/json": map[string]any{"schema": schema}}
		for _, m := range d.AltMedia { // a stream the same route answers when asked (Accept)
			content[m] = map[string]any{"schema": rawMediaSchema(m)}
		}
		resp["content"] = content
	}
	return status, resp
}

// rawMediaSchema is the schema of an answer of media type m that is not a JSON document;
// under a range (*/*: whatever a stored file is) its bytes are of no one known type.
func rawMediaSchema(m string) map[string]any {
	if strings.Contains(m, "*") {
		m = "application/octet-stream"
	}
	return map[string]any{"type": "string", "contentMediaType": m}
}

// errorStatuses are the failures a route can answer, derived from what the route table
// says of it and what its handler reads, plus the ones its description adds.
func errorStatuses(rt Route, d opDoc, ifMatch bool) []int {
	// Every route refuses a query parameter it does not declare (conventions §1).
	set := map[int]bool{http.StatusInternalServerError: true, http.StatusUnprocessableEntity: true}
	if !rt.Public {
		set[http.StatusUnauthorized] = true
		set[http.StatusTooManyRequests] = true
	}
	if !rt.Public && !rt.Need.AnyKey {
		set[http.StatusForbidden] = true // role, module, scope, instance admin or quota
	}
	if strings.Contains(rt.Path, "{") {
		set[http.StatusNotFound] = true
	}
	if d.Body != nil {
		for _, c := range []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity} {
			set[c] = true
		}
	}
	if rt.Idempotent {
		set[http.StatusConflict] = true            // the same key still in progress
		set[http.StatusUnprocessableEntity] = true // the same key with another body
	}
	if ifMatch {
		set[http.StatusPreconditionFailed] = true
	}
	if rt.NoBody {
		set[http.StatusBadRequest] = true           // a body other than {}
		set[http.StatusUnsupportedMediaType] = true // a body that is not JSON
	}
	if rt.Method != http.MethodGet {
		set[http.StatusInsufficientStorage] = true // a write on a full disk
	}
	// Every route but liveness answers 503 while the server starts (opening its database);
	// once it runs, an authenticated route does when the database is unreachable (the
	// token is checked in it).
	if rt.Method != http.MethodGet || rt.Path != "/healthz" {
		set[http.StatusServiceUnavailable] = true
	}
	for _, c := range d.Errors {
		set[c] = true
	}
	out := make([]int, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Declared is what a route declares of its input, for the server's check of the query
// (conventions §1): the query parameters it takes (per_page and cursor on a list), each
// true when its schema is an array and so may be repeated, and whether it reads a body.
// The document's parameters come from the same entry, so the check and the docs agree.
func Declared(method, path string) (query map[string]bool, body bool) {
	d := opDocs[method+" "+path]
	query = map[string]bool{}
	if d.Shape == shapeList {
		query["per_page"], query["cursor"] = false, false
	}
	for _, q := range d.Query {
		query[q.Name] = q.Schema["type"] == "array"
	}
	return query, d.Body != nil
}
