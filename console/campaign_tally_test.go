package console

import (
	"encoding/json"
	"testing"
)

// TestCampaignTallyCountsEachRecipientOnce: a campaign's progress (its page's bar, its
// list's row) counts the recipients of its total and the numbers skipped at import, each
// once. A recipient found on the suppression list when its turn came is in the total
// and in counts.suppressed: read from that count, it was counted twice (here 3 of 4
// done for a campaign of 3, one of them still waiting).
func TestCampaignTallyCountsEachRecipientOnce(t *testing.T) {
	for _, c := range []struct {
		name, record string
		done, all    float64
	}{
		{"new", `{"counts": {"total": 2, "pending": 2, "in_progress": 0, "suppressed": 0}, "import": {"suppressed": 0}}`, 0, 2},
		{"one skipped at import", `{"counts": {"total": 2, "pending": 2, "in_progress": 0, "suppressed": 1}, "import": {"suppressed": 1}}`, 1, 3},
		{"one suppressed at its turn", `{"counts": {"total": 2, "pending": 1, "in_progress": 0, "suppressed": 2}, "import": {"suppressed": 1}}`, 2, 3},
		{"calling", `{"counts": {"total": 3, "pending": 0, "in_progress": 1, "suppressed": 1, "completed": {"answered": 1}}, "import": {"suppressed": 0}}`, 2, 3},
	} {
		var record map[string]any
		if err := json.Unmarshal([]byte(c.record), &record); err != nil {
			t.Fatal(err)
		}
		if got := tally(record); got.Done != c.done || got.All != c.all {
			t.Errorf("%s: %v of %v done, want %v of %v", c.name, got.Done, got.All, c.done, c.all)
		}
	}
}
