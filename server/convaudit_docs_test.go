package server_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Conventions §17 (leaned on by §22, §24, §25): "Idempotency-Key on every POST that
// creates something". docs/api.md lists the routes that take the key and says that
// "Elsewhere the header is ignored": the list must be the route table's, which the
// OpenAPI document (generated from it, TestOpenAPIDocsFile) marks with the
// IdempotencyKey parameter. A route missing from the list tells a client its retries are
// not safe when they are; one listed but not taking the key, the other way round.
func TestConvAuditIdempotentRoutesListed(t *testing.T) {
	raw, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Ref string `json:"$ref"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var marked []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			for _, p := range op.Parameters {
				if strings.HasSuffix(p.Ref, "/IdempotencyKey") {
					if method != "post" {
						t.Errorf("%s %s takes an Idempotency-Key: the list names POSTs only", method, path)
					}
					marked = append(marked, strings.TrimPrefix(path, "/api/v1"))
				}
			}
		}
	}
	md, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(md)[strings.Index(string(md), "## Idempotency-Key"):]
	section = section[:strings.Index(section, "Elsewhere the header is ignored")]
	var listed []string
	for _, m := range regexp.MustCompile("`(/[^`]*)`").FindAllStringSubmatch(section, -1) {
		listed = append(listed, m[1])
	}
	slices.Sort(marked)
	slices.Sort(listed)
	if !slices.Equal(marked, listed) {
		t.Errorf("docs/api.md's Idempotency-Key routes:\n%v\nthe routes that take the key:\n%v", listed, marked)
	}
}
