package storetest

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testPhoneNumberTaken: a phone number is taken in every workspace once one registers it,
// and free again once its number is deleted.
func testPhoneNumberTaken(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	n := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: "ws_1", PhoneNumber: "+15550101", Provider: "sip"}
	taken := func(phone string) bool {
		var ok bool
		view(t, s, func(tx service.Tx) error {
			var err error
			ok, err = tx.PhoneNumberTaken(phone)
			return err
		})
		return ok
	}
	if taken(n.PhoneNumber) {
		t.Fatal("a phone number nobody registered is taken")
	}
	update(t, s, func(tx service.Tx) error {
		if ok, err := tx.InsertNumber(n); err != nil || !ok {
			t.Fatalf("insert: %v %v", ok, err)
		}
		return nil
	})
	if !taken(n.PhoneNumber) {
		t.Error("a registered phone number is not taken")
	}
	if taken("+15550102") {
		t.Error("another phone number is taken")
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteNumber(n.ID) })
	if taken(n.PhoneNumber) {
		t.Error("a deleted number's phone number is still taken")
	}
}
