package bolt

import (
	"context"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.SubscriptionService = (*DB)(nil)

// bucketSubscriptions holds the plan of each workspace that has one; the others are on
// the default, unlimited plan.
var bucketSubscriptions = []byte("subscriptions")

// subscriptionRow is a plan as stored: a limit absent from Limits is unlimited.
type subscriptionRow struct {
	Plan      string           `json:"plan"`
	Status    string           `json:"status"`
	Limits    map[string]int64 `json:"limits"`
	UpdatedAt data.Time        `json:"updated_at"`
}

// MaxPlanLen bounds a plan name.
const MaxPlanLen = 100

func loadSubscription(tx *bbolt.Tx, ws string) *subscriptionRow {
	row := &subscriptionRow{Plan: data.DefaultPlan, Status: "active"}
	if found, err := getJSON(tx.Bucket(bucketSubscriptions), []byte(ws), row); err != nil || !found {
		row = &subscriptionRow{Plan: data.DefaultPlan, Status: "active"}
	}
	if row.Limits == nil {
		row.Limits = map[string]int64{}
	}
	return row
}

// monthOf returns the calendar month (UTC) holding t: the billing period.
func monthOf(t time.Time) (time.Time, time.Time) {
	t = t.UTC()
	start := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 1, 0)
}

func (db *DB) subscription(tx *bbolt.Tx, ws string) *data.Subscription {
	row := loadSubscription(tx, ws)
	now := db.now()
	start, end := monthOf(now)
	s := &data.Subscription{
		Plan: row.Plan, Status: row.Status, Limits: map[string]*int64{}, Usage: map[string]int64{},
		CurrentPeriodStart: data.NewTime(start), CurrentPeriodEnd: data.NewTime(end),
	}
	for _, name := range data.LimitNames {
		if v, ok := row.Limits[name]; ok {
			s.Limits[name] = &v
		} else {
			s.Limits[name] = nil
		}
		s.Usage[name] = 0 // a kind whose store registered no counter yet shows 0
		if count, ok := quotaCounters[name]; ok {
			s.Usage[name] = count(tx, ws, -1)
		}
	}
	s.Usage[data.LimitCallMinutes] = usedMinutes(tx, ws, now)
	return s
}

// Subscription implements data.SubscriptionService.
func (db *DB) Subscription(ctx context.Context, ws string) (*data.Subscription, error) {
	var s *data.Subscription
	err := db.view(func(tx *bbolt.Tx) error {
		if _, err := loadWorkspace(tx, ws); err != nil {
			return err
		}
		s = db.subscription(tx, ws)
		return nil
	})
	return s, err
}

// SetSubscription implements data.SubscriptionService.
func (db *DB) SetSubscription(ctx context.Context, ws string, in data.SubscriptionSet) (*data.Subscription, error) {
	var errs validate.Errors
	if in.Plan != nil {
		errs.NotBlank("plan", *in.Plan)
		errs.MaxLen("plan", *in.Plan, MaxPlanLen)
	}
	for name, v := range in.Limits {
		if !slices.Contains(data.LimitNames, name) {
			errs.Addf(name, "The %s limit is unknown; limits are %s.", name, strings.Join(data.LimitNames, ", "))
		} else if v < -1 {
			errs.Addf(name, "The %s limit must be -1 (unlimited) or at least 0.", name)
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	var s *data.Subscription
	err := db.update(func(tx *bbolt.Tx) error {
		if _, err := loadWorkspace(tx, ws); err != nil {
			return err
		}
		row := loadSubscription(tx, ws)
		if in.Plan != nil {
			row.Plan = strings.TrimSpace(*in.Plan)
		}
		for name, v := range in.Limits {
			if v < 0 {
				delete(row.Limits, name)
			} else {
				row.Limits[name] = v
			}
		}
		row.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketSubscriptions), []byte(ws), row); err != nil {
			return err
		}
		s = db.subscription(tx, ws)
		return nil
	})
	return s, err
}

// deleteWorkspaceSubscription removes a deleted workspace's plan (a cascade).
func deleteWorkspaceSubscription(tx *bbolt.Tx, ws string) error {
	return tx.Bucket(bucketSubscriptions).Delete([]byte(ws))
}
