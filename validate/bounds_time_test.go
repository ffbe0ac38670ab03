package validate

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// TestTimestampBounds: a body's timestamp (Timestamp) is refused on its path below
// 0001-01-01T00:00:00.001Z (the zero time a record shows as null, and year 0000) and
// accepted on the edge; its upper edge, 9999-12-31T23:59:59.999Z in UTC, is the decoder's
// (data.Time, TestTimeUnmarshalYears).
func TestTimestampBounds(t *testing.T) {
	first := time.Date(1, 1, 1, 0, 0, 0, int(time.Millisecond), time.UTC)
	at := func(past bool) data.Time {
		if past {
			return data.Time{Time: first.Add(-time.Millisecond)} // the zero time
		}
		return data.NewTime(first)
	}
	year0 := func(past bool) data.Time {
		if past {
			return data.Time{Time: first.AddDate(0, 0, -1)} // 0000-12-31T00:00:00.001Z
		}
		return data.NewTime(first)
	}
	campaign := func(start data.Time) error {
		mc := 5
		_, err := CampaignCreate(data.CampaignCreate{Name: "Reminders", AgentID: "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ",
			NumberID: "num_01JD6ZZZZZZZZZZZZZZZZZZZZZ", Window: &data.CampaignWindow{Days: []string{"mon"}, Start: "09:00", End: "18:00"},
			MaxConcurrent: &mc, StartAt: &start, Recipients: []data.RecipientInput{{PhoneNumber: "+14155550101"}}}, "")
		return err
	}
	last := data.NewTime(time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC))
	checkBounds(t, []bound{
		{"campaign start_at, the zero time", "start_at", func(past bool) error {
			return campaign(at(past))
		}},
		{"campaign start_at, year 0000", "start_at", func(past bool) error {
			return campaign(year0(past))
		}},
		{"backfill from, year 0000", "from", func(past bool) error {
			return AnalysisBackfill(data.AnalysisBackfill{From: year0(past), To: last})
		}},
		{"backfill to, year 0000", "to", func(past bool) error {
			to := data.NewTime(first.Add(time.Hour))
			if past {
				to = year0(true)
			}
			return AnalysisBackfill(data.AnalysisBackfill{From: data.NewTime(first), To: to})
		}},
	})
}
