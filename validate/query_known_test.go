package validate_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func TestKnownQuery(t *testing.T) {
	declared := map[string]bool{"agent_id": false, "per_page": false, "types": true}
	cases := []struct {
		name, raw string
		want      map[string][]string // nil: no fault
	}{
		{"empty", "", nil},
		{"declared once each", "agent_id=agt_1&per_page=5&types=a", nil},
		{"empty pairs skipped", "&&agent_id=x&", nil},
		{"no value", "agent_id", nil},
		{"escaped name", "agent%5Fid=x", nil},
		{"plus in value", "agent_id=a+b", nil},
		{"array repeated", "types=a&types=b&types=c", nil},
		{"typo", "agnet_id=x", map[string][]string{"agnet_id": {"The agnet_id parameter is not a known parameter."}}},
		{"case matters", "Agent_id=x", map[string][]string{"Agent_id": {"The Agent_id parameter is not a known parameter."}}},
		{"unknown twice named once", "zz=1&zz=2", map[string][]string{"zz": {"The zz parameter is not a known parameter."}}},
		{"every unknown at once", "a=1&agent_id=x&b=2", map[string][]string{
			"a": {"The a parameter is not a known parameter."}, "b": {"The b parameter is not a known parameter."}}},
		{"scalar twice", "agent_id=x&agent_id=x", map[string][]string{"agent_id": {"The agent_id parameter must be given once."}}},
		{"scalar three times named once", "per_page=1&per_page=2&per_page=3", map[string][]string{"per_page": {"The per_page parameter must be given once."}}},
		{"no name", "=x", map[string][]string{"": {"A query parameter has no name."}}},
		{"bad escape in name", "agent%zzid=x", map[string][]string{"agent%zzid": {"The agent%zzid parameter is not correctly encoded."}}},
		{"semicolon in name", "a;b=x", map[string][]string{"a;b": {"The a;b parameter is not correctly encoded."}}},
		{"bad escape in value", "agent_id=%zz", map[string][]string{"agent_id": {"The agent_id parameter's value is not correctly encoded: escape ; and % as %3B and %25."}}},
		{"semicolon in value", "agent_id=x;per_page=1", map[string][]string{"agent_id": {"The agent_id parameter's value is not correctly encoded: escape ; and % as %3B and %25."}}},
		{"bad value of an unknown name", "zz=%zz", map[string][]string{"zz": {"The zz parameter is not a known parameter."}}},
		{"NUL in value", "agent_id=a%00b", map[string][]string{"agent_id": {"The agent_id parameter must not contain U+0000 (a NUL character)."}}},
		{"NUL in a repeated value", "types=a&types=%00", map[string][]string{"types": {"The types parameter must not contain U+0000 (a NUL character)."}}},
		{"escaped percent then 00 is text", "agent_id=%2500", nil},
		{"bad value then twice", "agent_id=%zz&agent_id=x", map[string][]string{"agent_id": {"The agent_id parameter's value is not correctly encoded: escape ; and % as %3B and %25."}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := validate.KnownQuery(c.raw, declared)
			if c.want == nil {
				if err != nil {
					t.Fatalf("KnownQuery(%q) = %v, want no fault", c.raw, err)
				}
				return
			}
			e, ok := err.(*data.Error)
			if !ok || e.Code != data.EINVALID {
				t.Fatalf("KnownQuery(%q) = %v, want validation_failed", c.raw, err)
			}
			if !maps.EqualFunc(e.Fields, c.want, slices.Equal) {
				t.Errorf("KnownQuery(%q) names %v, want %v", c.raw, e.Fields, c.want)
			}
		})
	}
}

// TestKnownQueryNothingDeclared: a route declaring nothing refuses every parameter.
func TestKnownQueryNothingDeclared(t *testing.T) {
	if validate.KnownQuery("", nil) != nil {
		t.Error("an empty query is refused")
	}
	e, _ := validate.KnownQuery("per_page=1", nil).(*data.Error)
	if e == nil || len(e.Fields["per_page"]) != 1 {
		t.Errorf("per_page on a route declaring nothing: %v", e)
	}
}

func TestQueryHoldsNUL(t *testing.T) {
	for raw, want := range map[string]bool{
		"": false, "a=b": false, "a=%00": true, "a=x%00y&b=1": true, "%00=1": true,
		"a=%2500": false, "a=%zz&b=%00": true, "a=%zz%00": false, "q=%0": false,
	} {
		if got := validate.QueryHoldsNUL(raw); got != want {
			t.Errorf("QueryHoldsNUL(%q) = %v, want %v", raw, got, want)
		}
	}
}
