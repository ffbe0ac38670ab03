package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 27 file listed deliveries by webhook only. Opening it (schema 28) lists the
// stored ones by webhook and type too, in the opening transaction, so that a narrowed
// page of before the upgrade walks its types; then every path that removes deliveries
// (a prune, a webhook's delete, a workspace's) takes their entries with them.
func TestDeliveriesOfAnOlderFileAreListedByType(t *testing.T) {
	db, dir, opts := openFile(t)
	ctx := context.Background()
	types := []string{data.EventCallEnded, data.EventAgentCreated, data.EventAgentDeleted}
	want := map[string][]string{} // "<webhook> <type>" → ids, newest first
	old := data.NewTime(time.Now().Add(-time.Hour))
	var hooks []string // valid ids: a workspace's delete loads its webhooks by them
	if err := db.Update(ctx, func(stx service.Tx) error {
		for _, ws := range []string{"ws_1", "ws_2", "ws_3"} {
			w := &data.WebhookRecord{Webhook: data.Webhook{ID: db.IDs().New(data.PrefixWebhook), WorkspaceID: ws, URL: "https://example.com/h", Events: []string{"*"}, Enabled: true}}
			if err := stx.PutWebhook(w); err != nil {
				return err
			}
			hooks = append(hooks, w.ID)
		}
		for i := range 60 {
			wh, typ := hooks[i%3], types[i%7%3]
			d := &data.Delivery{ID: db.IDs().New(data.PrefixDelivery), WebhookID: wh, EventID: "evt_x", EventType: typ,
				Attempt: 1, Status: data.DeliverySucceeded, CreatedAt: old}
			if err := stx.PutDelivery(d); err != nil {
				return err
			}
			want[wh+" "+typ] = append([]string{d.ID}, want[wh+" "+typ]...)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db = asOlderFile(t, db, dir, opts, 27, bucketDeliveriesByType)
	defer db.Close()
	for _, wh := range hooks {
		for _, typ := range types {
			var got []string
			if err := db.View(ctx, func(tx service.Tx) error {
				list, _, err := tx.Deliveries(wh, service.DeliveryFilter{Types: []string{typ}}, data.PageRequest{PerPage: 100})
				for _, d := range list {
					got = append(got, d.ID)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want[wh+" "+typ]) {
				t.Errorf("%s, %s: %v; want %v", wh, typ, got, want[wh+" "+typ])
			}
		}
	}
	entries := func() []string {
		var left []string
		if err := db.bolt.View(func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketDeliveriesByType).ForEach(func(k, _ []byte) error {
				left = append(left, string(bytes.ReplaceAll(k, []byte{0}, []byte(" "))))
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		return left
	}
	if n := len(entries()); n != 60 {
		t.Fatalf("the filled index holds %d entries, want 60", n)
	}
	if err := db.Update(ctx, func(tx service.Tx) error {
		if err := tx.DeleteWebhook(hooks[0]); err != nil {
			return err
		}
		if err := tx.DeleteWorkspace("ws_2"); err != nil {
			return err
		}
		n, err := tx.PruneDeliveries(time.Now(), 5)
		if err == nil && n != 5 {
			err = fmt.Errorf("pruned %d, want 5", n)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if left := entries(); len(left) != 15 || slices.ContainsFunc(left, func(k string) bool { return !bytes.HasPrefix([]byte(k), []byte(hooks[2]+" ")) }) {
		t.Errorf("after the deletes and a prune of 5 the index holds %d entries, want the third webhook's 15 left: %v", len(left), left)
	}
}
