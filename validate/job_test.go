package validate

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// TestJobKindBound: a kind of MaxJobKindLength characters has its form checked only; one
// more is refused for its length, on kind alone.
func TestJobKindBound(t *testing.T) {
	kind := func(n int) string { return "a." + strings.Repeat("b", n-2) }
	checkBounds(t, []bound{
		{"MaxJobKindLength", "kind", func(past bool) error {
			_, err := JobFilterParams(url.Values{"kind": {kind(upTo(MaxJobKindLength, past))}})
			return err
		}},
	})
	// Counted in characters: a name of two-byte characters at the bound is refused for
	// its form, not its length, and past the bound for its length.
	_, err := JobFilterParams(url.Values{"kind": {"a." + chars(MaxJobKindLength-2)}})
	if msg := jobFaults(err)["kind"]; len(msg) != 1 || strings.Contains(msg[0], "greater than") {
		t.Errorf("two-byte kind at the bound: %v; want a fault on its form", msg)
	}
}

// TestJobFilterParams: every filter of GET /api/v1/jobs read or refused, each fault on
// its own parameter and all at once.
func TestJobFilterParams(t *testing.T) {
	agent := agentIDList(1)[0]
	cases := []struct {
		name   string
		query  url.Values
		faults []string
		want   data.JobFilter
	}{
		{"none", url.Values{}, nil, data.JobFilter{}},
		{"every filter", url.Values{"kind": {"analysis.call"}, "status": {"failed"}, "agent_id": {agent},
			"from": {"2026-11-21T10:00:00Z"}, "to": {"2026-11-22T10:00:00+01:00"}}, nil,
			data.JobFilter{Kind: "analysis.call", Status: data.JobFailed, AgentID: agent,
				From: mustTime("2026-11-21T10:00:00Z"), To: mustTime("2026-11-22T09:00:00Z")}},
		{"each status", url.Values{"status": {data.JobCanceled}}, nil, data.JobFilter{Status: data.JobCanceled}},
		{"unknown status", url.Values{"status": {"stuck"}}, []string{"status"}, data.JobFilter{Status: "stuck"}},
		{"status in capitals", url.Values{"status": {"FAILED"}}, []string{"status"}, data.JobFilter{Status: "FAILED"}},
		{"empty status", url.Values{"status": {""}}, []string{"status"}, data.JobFilter{}},
		{"kind without a feature", url.Values{"kind": {"call"}}, []string{"kind"}, data.JobFilter{Kind: "call"}},
		{"kind in capitals", url.Values{"kind": {"Analysis.call"}}, []string{"kind"}, data.JobFilter{Kind: "Analysis.call"}},
		{"empty kind", url.Values{"kind": {""}}, []string{"kind"}, data.JobFilter{}},
		{"agent id of another record", url.Values{"agent_id": {"kb_01JD6000000000000000000000"}}, []string{"agent_id"},
			data.JobFilter{AgentID: "kb_01JD6000000000000000000000"}},
		{"bad times", url.Values{"from": {"yesterday"}, "to": {"2026-13-01T00:00:00Z"}}, []string{"from", "to"}, data.JobFilter{}},
		{"every fault at once", url.Values{"kind": {"x"}, "status": {"x"}, "agent_id": {"x"}, "from": {"x"}},
			[]string{"kind", "status", "agent_id", "from"}, data.JobFilter{Kind: "x", Status: "x", AgentID: "x"}},
	}
	for _, c := range cases {
		got, err := JobFilterParams(c.query)
		faults := jobFaults(err)
		if len(faults) != len(c.faults) {
			t.Errorf("%s: faults %v, want on %v", c.name, faults, c.faults)
		}
		for _, p := range c.faults {
			if len(faults[p]) == 0 {
				t.Errorf("%s: no fault on %s: %v", c.name, p, faults)
			}
		}
		if got.Kind != c.want.Kind || got.Status != c.want.Status || got.AgentID != c.want.AgentID ||
			!got.From.Equal(c.want.From) || !got.To.Equal(c.want.To) {
			t.Errorf("%s: read %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestJobFilterRangeAndKnownKind: to must follow from (a range of one millisecond is
// one), and a kind of a good form must still be registered.
func TestJobFilterRangeAndKnownKind(t *testing.T) {
	from := mustTime("2026-11-21T10:00:00Z")
	for _, c := range []struct {
		name  string
		to    string
		fault bool
	}{{"to before from", "2026-11-21T09:59:59.999Z", true}, {"to at from", "2026-11-21T10:00:00Z", true}, {"one millisecond", "2026-11-21T10:00:00.001Z", false}} {
		err := JobFilterRange(data.JobFilter{From: from, To: mustTime(c.to)})
		if got := len(jobFaults(err)["to"]) > 0; got != c.fault {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	registered := []string{"analysis.call", "knowledge_base.fetch_url"}
	if err := JobKindKnown("analysis.call", registered); err != nil {
		t.Errorf("a registered kind: %v", err)
	}
	if err := JobKindKnown("", registered); err != nil {
		t.Errorf("no kind: %v", err)
	}
	var e *data.Error
	if err := JobKindKnown("analysis.cal", registered); !errors.As(err, &e) || len(e.Fields["kind"]) != 1 ||
		!strings.Contains(e.Fields["kind"][0], "knowledge_base.fetch_url") {
		t.Errorf("an unknown kind: %v; want a fault on kind naming the registered ones", err)
	}
}

// jobFaults is err's field faults, nil when it has none.
func jobFaults(err error) map[string][]string {
	var e *data.Error
	if !errors.As(err, &e) {
		return nil
	}
	return e.Fields
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}
