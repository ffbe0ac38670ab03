package storetest

import (
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testNameSearchFolds: an agent name search and a numbers search ignore the case of
// every script (data.FoldCase), not only ASCII's, on every engine: "ÉLODIE" finds
// "élodie" on a PostgreSQL database of the C locale too, where lower() folds ASCII only.
// A rename searches by the new name. Accents still count: "elodie" finds no "élodie".
func testNameSearchFolds(t *testing.T, open Opener) {
	s := open(t)
	const ws = "ws_01JD6000000000000000000000"
	g := stepIDs()
	var agents []string
	// A word's final sigma (ς) is a σ in capitals, as the long s (ſ) is an S and the
	// Kelvin sign a K: each found by the other case, both ways.
	for _, name := range []string{"élodie support", "ÖFFNUNGSZEITEN", "σοφία", "Plain", "Οδυσσέας", "ΜΥΘΟΣ", "Meſſe 5 K"} {
		id := g.New(data.PrefixAgent)
		agents = append(agents, id)
		a := storedAgent(id, ws, data.AgentStatusDraft)
		a.Name = name
		update(t, s, func(tx service.Tx) error { return tx.PutAgent(a, "") })
	}
	// The last agent renamed: the stored fold follows the name.
	renamed := storedAgent(agents[3], ws, data.AgentStatusDraft)
	renamed.Name = "ÅSA"
	update(t, s, func(tx service.Tx) error { return tx.PutAgent(renamed, data.AgentStatusDraft) })

	desk := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: ws, PhoneNumber: "+33155550101", Nickname: "Accueil ÉLODIE", Provider: "sip"}
	hall := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: ws, PhoneNumber: "+30215550102", Nickname: "συνέδριο", Provider: "sip"}
	update(t, s, func(tx service.Tx) error {
		for _, n := range []*data.Number{desk, hall} {
			if ok, err := tx.InsertNumber(n); err != nil || !ok {
				t.Fatalf("insert %s: %v %v", n.PhoneNumber, ok, err)
			}
		}
		hall.Nickname = "ΑΊΘΟΥΣΑ Öst"
		return tx.PutNumber(hall)
	})

	view(t, s, func(tx service.Tx) error {
		for _, c := range []struct {
			q    string
			want []string
		}{
			{"ÉLODIE", []string{agents[0]}},
			{"Élodie Sup", []string{agents[0]}},
			{"öffnung", []string{agents[1]}},
			{"ΣΟΦΊΑ", []string{agents[2]}},
			{"åsa", []string{agents[3]}},
			{"plain", []string{}}, // the old name
			{"ΟΔΥΣΣΈΑΣ", []string{agents[4]}},
			{"μυθος", []string{agents[5]}},
			{"ας", []string{agents[4]}},
			{"MESSE 5 k", []string{agents[6]}},
			{"elodie", []string{}},
		} {
			got, _, err := tx.AgentIDs(ws, "", nil, service.AgentSearch{Name: c.q}, data.PageRequest{PerPage: 10})
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("AgentIDs(name %q) = %v, %v; want %v", c.q, got, err, c.want)
			}
		}
		for _, c := range []struct {
			q    string
			want []string
		}{
			{"élodie", []string{desk.ID}},
			{"αίθουσα", []string{hall.ID}},
			{"ÖST", []string{hall.ID}},
			{"ΣΥΝΈΔΡΙΟ", []string{}}, // the old nickname
		} {
			got, _, err := tx.Numbers(ws, service.NumberSearch{NumberFilter: data.NumberFilter{Q: c.q}}, data.PageRequest{PerPage: 10})
			if ids := numberIDs(got); err != nil || !slices.Equal(ids, c.want) {
				t.Errorf("Numbers(q %q) = %v, %v; want %v", c.q, ids, err, c.want)
			}
		}
		return nil
	})
}
