package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// PriceTableService reads and sets the caller's workspace's price table; the route table
// admits owners and admins only.
type PriceTableService struct{ *base }

var _ data.PriceTableService = (*PriceTableService)(nil)

// priceTable is the workspace's table, the default when none was set.
func priceTable(tx Tx, ws string) (*data.PriceTable, error) {
	p, err := tx.PriceTable(ws)
	if err != nil || p != nil {
		return p, err
	}
	return data.DefaultPriceTable(), nil
}

// PriceTable implements data.PriceTableService.
func (s *PriceTableService) PriceTable(ctx context.Context) (*data.PriceTable, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var out *data.PriceTable
	err = s.store.View(ctx, func(tx Tx) error {
		out, err = priceTable(tx, p.WorkspaceID)
		return err
	})
	return out, err
}

// SetPriceTable implements data.PriceTableService: the whole table is replaced (If-Match
// honoured) and the change recorded (price_table.updated). Calls keep the cost they were
// given.
func (s *PriceTableService) SetPriceTable(ctx context.Context, in data.PriceTableSet) (*data.PriceTable, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.PriceTable(in)); err != nil {
		return nil, err
	}
	var out *data.PriceTable
	err = s.store.Update(ctx, func(tx Tx) error {
		current, err := priceTable(tx, p.WorkspaceID)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
			return err
		}
		if next := priceTableOf(in, current.UpdatedAt); unchangedSince(storedSnapshot(current), next) {
			out = current
			return errNothingToWrite // nothing changed: no write, no event (unchanged.go)
		}
		out, err = s.storePriceTable(ctx, tx, p.WorkspaceID, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// priceTableOf is the table in sets (checked by validate.PriceTable), updated at.
func priceTableOf(in data.PriceTableSet, at *data.Time) *data.PriceTable {
	out := &data.PriceTable{Currency: in.Currency, Prices: make([]data.Price, len(in.Prices)), UpdatedAt: at}
	for i, pr := range in.Prices {
		out.Prices[i] = data.Price{Provider: pr.Provider, Model: pr.Model, Unit: pr.Unit, Price: *pr.Price}
	}
	return out
}

// storePriceTable replaces workspace ws's table with in (checked by validate.PriceTable)
// and records the change (price_table.updated); a workspace import sets the table through
// it too.
func (b *base) storePriceTable(ctx context.Context, tx Tx, ws string, in data.PriceTableSet) (*data.PriceTable, error) {
	now := b.timeNow()
	out := priceTableOf(in, &now)
	if err := tx.PutPriceTable(ws, out); err != nil {
		return nil, err
	}
	if _, err := b.record(ctx, tx, data.EventPriceTableUpdated, ws, out); err != nil {
		return nil, err
	}
	return out, nil
}
