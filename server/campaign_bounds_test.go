package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/validate"
)

// csvWithVariables is a recipients file of one row whose header names n variable columns.
func csvWithVariables(n int) string {
	header, row := []string{"phone_number"}, []string{"+14155550101"}
	for i := range n {
		header, row = append(header, fmt.Sprint("v", i)), append(row, "x")
	}
	return strings.Join(header, ",") + "\n" + strings.Join(row, ",") + "\n"
}

// TestCampaignCSVVariablesBound: a CSV upload holds the bound of a recipient's variables
// as a JSON body does (validate.MaxRecipientVariables): at it the campaign is created;
// one column past it is a 422 on file, and no campaign is stored.
func TestCampaignCSVVariablesBound(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	r := e.uploadCampaign(e.settingsJSON(), csvWithVariables(validate.MaxRecipientVariables))
	testkit.Expect(t, r, 201)
	if v := e.recipients(r.Data()["id"].(string))["+14155550101"]["variables"].(map[string]any); len(v) != validate.MaxRecipientVariables {
		t.Fatalf("the recipient has %d variables, want %d", len(v), validate.MaxRecipientVariables)
	}
	before := len(e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil).List())
	testkit.ExpectFields(t, e.uploadCampaign(e.settingsJSON(), csvWithVariables(validate.MaxRecipientVariables+1)), "file")
	if after := len(e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil).List()); after != before {
		t.Errorf("%d campaigns after a refused upload, want %d", after, before)
	}
}
