// Package fakecalls makes the seeded calls that benchmarks and the bench tool load: the
// same call for the same seed, with transcripts varied like customer-service speech.
package fakecalls

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// vocabulary is the words seeded transcripts are drawn from, most frequent first: a
// Zipf draw over it gives the skew of real speech (a few words everywhere, most rare),
// and order numbers and names add a long tail of terms held by few calls.
var vocabulary = strings.Fields(`
the i to you a and my it is that for on can of have in be this me what with your
we do at so just not are was but get like will would please yes no okay thanks thank
help need want know call about could there if today order account time one now
appointment book booking schedule reschedule cancel cancellation refund payment card
charge bill billing invoice price plan subscription upgrade downgrade renew renewal
delivery deliver shipping shipped package tracking number address street city postcode
change update email phone password login reset access locked problem issue error broken
working service support agent manager speak person human wait hold transfer back
monday tuesday wednesday thursday friday saturday sunday morning afternoon evening week
month tomorrow yesterday next last first second third minute hour late early soon
insurance claim policy coverage doctor clinic prescription pharmacy dentist visit
restaurant table reservation party dinner lunch menu allergy vegetarian
car rental pickup return airport flight hotel room checkin checkout luggage
internet router outage slow connection wifi modem technician install
loan mortgage rate interest balance transfer statement fraud stolen dispute
complaint unhappy disappointed great perfect wonderful sorry understand confirm
confirmed confirmation correct wrong right sure maybe already still again also
discount coupon promotion offer free trial premium basic family business
warranty repair replacement damaged missing item size color exchange store online
`)

var names = strings.Fields(`ada grace alan linus margaret barbara ken dennis donald
edsger john frances radia sophie hedy katherine dorothy mary tim vint bob`)

// Transcript is the transcript of seeded call i: 4 to 12 utterances of 6 to 16
// words each, the same for the same i.
func Transcript(i int64) []data.TranscriptItem {
	r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(uint64(i), 0x21bf)), 1.07, 2, uint64(len(vocabulary)-1))
	n := 4 + r.IntN(9)
	out := make([]data.TranscriptItem, n)
	for k := range out {
		words := make([]string, 6+r.IntN(11))
		for w := range words {
			switch x := r.IntN(100); {
			case x < 2:
				words[w] = fmt.Sprint(10000 + r.IntN(90000)) // an order or ticket number
			case x < 4:
				words[w] = names[r.IntN(len(names))]
			default:
				words[w] = vocabulary[zipf.Uint64()]
			}
		}
		role := "user"
		if k%2 == 0 {
			role = "agent"
		}
		out[k] = data.TranscriptItem{Role: role, Content: strings.Join(words, " ") + ".", StartMS: int64(k) * 3000}
	}
	return out
}

// Finished is a typical finished phone call of workspace ws, created at at: a short
// transcript, a few variables, a tenth of them failed, each drawing its direction, its
// duration and one of reasons from rng.
func Finished(ws, id string, at time.Time, agent, number string, rng *rand.Rand, reasons []string) *data.Call {
	created := data.NewTime(at)
	version, from, to := 1, "+14155550123", "+442071838750"
	c := &data.Call{
		ID: id, WorkspaceID: ws, AgentID: agent, AgentVersion: &version, NumberID: &number,
		Direction: []string{"inbound", "outbound"}[rng.IntN(2)], FromNumber: &from, ToNumber: &to,
		Status: data.CallEnded, CreatedAt: created, UpdatedAt: created,
		Transcript: []data.TranscriptItem{
			{Role: "agent", Content: "Hello, thanks for calling. How can I help?", StartMS: 0},
			{Role: "user", Content: "I'd like to move my appointment to Friday.", StartMS: 2100},
			{Role: "agent", Content: "Done: Friday at 10. Anything else?", StartMS: 5200},
			{Role: "user", Content: "No, thank you.", StartMS: 8000},
		},
		Variables: map[string]any{"customer": "Ada"}, Metadata: map[string]any{"crm_id": 42},
	}
	if rng.IntN(10) == 0 {
		c.Status = data.CallFailed
	}
	started := data.NewTime(at.Add(2 * time.Second))
	d := int64(30_000 + rng.IntN(300_000))
	ended := data.NewTime(started.Add(time.Duration(d) * time.Millisecond))
	c.StartedAt, c.EndedAt, c.DurationMS = &started, &ended, &d
	c.DisconnectionReason = &reasons[rng.IntN(len(reasons))]
	return c
}

// AnalysisConfig is the analysis_config of the benchmarks' analyzed agent: an enum, a
// number and a boolean field, and a success criterion.
func AnalysisConfig() data.AnalysisConfig {
	crit := "The caller's request was handled."
	return data.AnalysisConfig{SuccessCriterion: &crit, Fields: []data.AnalysisField{
		{Name: "outcome", Type: data.AnalysisEnum, Description: "How the call ended", Choices: []string{"booked", "moved", "cancelled", "declined", "callback"}},
		{Name: "score", Type: data.AnalysisNumber, Description: "The caller's satisfaction, 1 to 10"},
		{Name: "new_customer", Type: data.AnalysisBoolean, Description: "A first-time caller"},
	}}
}

// Analysis is a typical analysis under AnalysisConfig, drawn from rng.
func Analysis(rng *rand.Rand) map[string]any {
	outcomes := []string{"booked", "booked", "booked", "moved", "cancelled", "declined", "callback"}
	return map[string]any{
		"outcome": outcomes[rng.IntN(len(outcomes))], "score": float64(1 + rng.IntN(10)),
		"new_customer": rng.IntN(4) == 0, "call_successful": rng.IntN(5) > 0,
	}
}
