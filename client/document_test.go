package client_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/client"
)

// TestClientCoversDocument proves the client matches the OpenAPI document: every
// operation of docs/openapi.json is in the client's route table with the same method and
// path, the table has nothing the document lacks, and the method each entry names exists.
func TestClientCoversDocument(t *testing.T) {
	raw, err := os.ReadFile("../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	inDoc := map[string]string{} // "METHOD path" → operationId
	for path, ops := range doc.Paths {
		for method, op := range ops {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
			default:
				continue // parameters, summary, ...
			}
			var o struct {
				OperationID string `json:"operationId"`
			}
			json.Unmarshal(op, &o)
			inDoc[strings.ToUpper(method)+" "+path] = o.OperationID
		}
	}
	table := client.Operations()
	inClient := map[string]string{}
	for id, op := range table {
		inClient[op[0]+" "+op[1]] = id
	}
	for route, id := range inDoc {
		if _, ok := inClient[route]; !ok {
			t.Errorf("the document's %s (%s) has no client method", route, id)
		}
	}
	for route, id := range inClient {
		docID, ok := inDoc[route]
		if !ok {
			t.Errorf("the client's %s (%s) is not in the document", route, id)
		} else if docID != id {
			t.Errorf("%s is operationId %q in the document but %q in the client", route, docID, id)
		}
	}
	if len(inDoc) < 60 {
		t.Errorf("the document lists only %d operations: did it fail to parse?", len(inDoc))
	}

	c, err := client.New("http://localhost")
	if err != nil {
		t.Fatal(err)
	}
	cv := reflect.ValueOf(c).Elem()
	for id, op := range table {
		svc, method, _ := strings.Cut(op[2], ".")
		f := cv.FieldByName(svc)
		if !f.IsValid() || !f.MethodByName(method).IsValid() {
			t.Errorf("%s names %s, which the client does not have", id, op[2])
		}
	}
}
