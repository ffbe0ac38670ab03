package validate_test

import (
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/bodyfuzz"
	"github.com/voiceapi/voiceapi/validate"
)

// FuzzCallQuery feeds arbitrary query strings to the list filter of GET /api/v1/calls and
// the analytics query: no panic, the same answer twice, faults only on parameters the
// endpoint reads, and an accepted query, written out again, reads the same.
func FuzzCallQuery(f *testing.F) {
	for _, q := range []string{
		"",
		"agent_id=agt_01JD6000000000000000000000&status=ended&direction=inbound",
		"from=2026-11-01T00:00:00Z&to=2026-11-21T10:04:05.123Z&interval=hour",
		"from=2026-11-21T00:00:00Z&to=2026-11-01T00:00:00Z",
		"from=2020-01-01T00:00:00Z&interval=hour",
		"number_id=num_x&status=lost&from=yesterday&to=&interval=week",
		"from=2026-11-01T00:00:00%2B05:30&from=2026-11-02T00:00:00Z",
	} {
		f.Add(q)
	}
	now := time.Date(2026, 11, 21, 10, 4, 5, 123_000_000, time.UTC)
	filterParams := []string{"agent_id", "number_id", "direction", "status", "from", "to"}
	analyticsParams := []string{"agent_id", "interval", "from", "to"}
	f.Fuzz(func(t *testing.T, raw string) {
		q, _ := url.ParseQuery(raw) // as r.URL.Query(): a bad pair is dropped, the rest kept

		cf, err := validate.CallFilter(q)
		cf2, err2 := validate.CallFilter(q)
		if !reflect.DeepEqual(cf, cf2) || !bodyfuzz.SameError(err, err2) {
			t.Fatalf("CallFilter(%q) is not deterministic", raw)
		}
		if err != nil {
			checkParamFault(t, err, filterParams)
		} else {
			if !cf.From.IsZero() && !cf.To.IsZero() && !cf.To.After(cf.From) {
				t.Fatalf("accepted filter with to %v not after from %v", cf.To, cf.From)
			}
			again := url.Values{}
			for name, v := range map[string]string{"agent_id": cf.AgentID, "number_id": cf.NumberID, "direction": cf.Direction, "status": cf.Status} {
				if v != "" {
					again.Set(name, v)
				}
			}
			for name, v := range map[string]time.Time{"from": cf.From, "to": cf.To} {
				if !v.IsZero() {
					again.Set(name, v.Format(time.RFC3339Nano))
				}
			}
			back, err := validate.CallFilter(again)
			if err != nil || !reflect.DeepEqual(back, cf) {
				t.Fatalf("accepted filter %+v reads back as %+v, %v", cf, back, err)
			}
		}

		aq, err := validate.CallAnalytics(q, now)
		aq2, err2 := validate.CallAnalytics(q, now)
		if !reflect.DeepEqual(aq, aq2) || !bodyfuzz.SameError(err, err2) {
			t.Fatalf("CallAnalytics(%q) is not deterministic", raw)
		}
		if err != nil {
			checkParamFault(t, err, analyticsParams)
			return
		}
		if aq.Interval != data.IntervalDay && aq.Interval != data.IntervalHour {
			t.Fatalf("accepted interval %q", aq.Interval)
		}
		step := time.Hour
		if aq.Interval == data.IntervalDay {
			step = 24 * time.Hour
		}
		if !aq.To.After(aq.From) || validate.AnalyticsBuckets(aq.From, aq.To, step) > validate.MaxAnalyticsBuckets {
			t.Fatalf("accepted analytics range %v..%v by %s", aq.From, aq.To, aq.Interval)
		}
		again := url.Values{"from": {aq.From.Format(time.RFC3339Nano)}, "to": {aq.To.Format(time.RFC3339Nano)}, "interval": {aq.Interval}}
		if aq.AgentID != "" {
			again.Set("agent_id", aq.AgentID)
		}
		back, err := validate.CallAnalytics(again, now)
		if err != nil || !reflect.DeepEqual(back, aq) {
			t.Fatalf("accepted analytics query %+v reads back as %+v, %v", aq, back, err)
		}
	})
}

// checkParamFault asserts a query's error is validation_failed naming only parameters the
// endpoint reads, each with a message.
func checkParamFault(t *testing.T, err error, params []string) {
	t.Helper()
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID || len(e.Fields) == 0 {
		t.Fatalf("query error without field faults: %#v", err)
	}
	for p, msgs := range e.Fields {
		if !slices.Contains(params, p) || len(msgs) == 0 || msgs[0] == "" {
			t.Fatalf("fault on %q (%v) is not one of the parameters %v", p, msgs, params)
		}
	}
}
