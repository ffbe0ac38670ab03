package bolt

import (
	"bytes"
	"encoding/binary"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Post-call analysis and cost beside the calls (service.AnalysisTx):
//
//	price_tables          "<ws>" → data.PriceTable
//	call_analysis_values  "<ws>\x00<agent>\x00<call id>" → data.AnalysisValues
//	call_field_rollups    "<ws>\x00<agent>\x00<field>\x00<hour, 8 bytes><version, 4 bytes>" → data.FieldRollup
//
// A call's values are keyed under its agent in id (time) order, so the partial hours at
// the edges of a range read only the analyzed calls there; the rollups of one field are
// in hour order across versions, so a range of hours is one scan whatever the version.
var (
	bucketPriceTables        = []byte("price_tables")
	bucketCallAnalysisValues = []byte("call_analysis_values")
	bucketCallFieldRollups   = []byte("call_field_rollups")
)

// PriceTable implements service.AnalysisTx.
func (t tx) PriceTable(ws string) (*data.PriceTable, error) {
	var p data.PriceTable
	found, err := getJSON(t.b.Bucket(bucketPriceTables), []byte(ws), &p)
	if err != nil || !found {
		return nil, err
	}
	return &p, nil
}

// PutPriceTable implements service.AnalysisTx.
func (t tx) PutPriceTable(ws string, p *data.PriceTable) error {
	return putJSON(t.b.Bucket(bucketPriceTables), []byte(ws), p)
}

func analysisValuesKey(ws, agent, callID string) []byte {
	return indexKey(ws+"\x00"+agent, callID)
}

func fieldRollupPrefix(ws, agent, field string) []byte {
	return []byte(ws + "\x00" + agent + "\x00" + field + "\x00")
}

func fieldRollupKey(prefix []byte, hour int64, version int) []byte {
	k := make([]byte, 0, len(prefix)+12)
	k = append(k, prefix...)
	k = binary.BigEndian.AppendUint64(k, uint64(hour))
	return binary.BigEndian.AppendUint32(k, uint32(version))
}

// SetCallAnalysisValues implements service.AnalysisTx.
func (t tx) SetCallAnalysisValues(c *data.Call, next *data.AnalysisValues) error {
	return setAnalysisValues(t.b, c, next)
}

func setAnalysisValues(tx *bbolt.Tx, c *data.Call, next *data.AnalysisValues) error {
	b := tx.Bucket(bucketCallAnalysisValues)
	key := analysisValuesKey(c.WorkspaceID, c.AgentID, c.ID)
	var old data.AnalysisValues
	found, err := getJSON(b, key, &old)
	if err != nil {
		return err
	}
	if found {
		if err := adjustFieldRollups(tx, c.WorkspaceID, &old, -1); err != nil {
			return err
		}
	}
	if next == nil {
		if !found {
			return nil
		}
		return b.Delete(key)
	}
	if err := adjustFieldRollups(tx, c.WorkspaceID, next, 1); err != nil {
		return err
	}
	return putJSON(b, key, next)
}

// adjustFieldRollups adds sign times v's contribution to the rollups of its hour and
// version.
func adjustFieldRollups(tx *bbolt.Tx, ws string, v *data.AnalysisValues, sign int64) error {
	b := tx.Bucket(bucketCallFieldRollups)
	hour := hourOf(v.Hour)
	for _, f := range v.Fields {
		key := fieldRollupKey(fieldRollupPrefix(ws, v.AgentID, f.Field), hour, v.Version)
		var r data.FieldRollup
		if _, err := getJSON(b, key, &r); err != nil {
			return err
		}
		r.Add(data.RollupOfValue(f), sign)
		if r.Numbers == 0 {
			r.Sum = 0 // no float residue once every number is taken back
		}
		if r.Count <= 0 {
			if err := b.Delete(key); err != nil {
				return err
			}
			continue
		}
		if err := putJSON(b, key, r); err != nil {
			return err
		}
	}
	return nil
}

// FieldRollups implements service.AnalysisTx.
func (t tx) FieldRollups(ws, agentID, field string, from, to time.Time, step time.Duration) ([]data.FieldBucket, error) {
	prefix := fieldRollupPrefix(ws, agentID, field)
	hours := func(from, to time.Time, fn func(time.Time, int, data.FieldRollup)) error {
		c := t.b.Bucket(bucketCallFieldRollups).Cursor()
		end := fieldRollupKey(prefix, hourOf(to), 0)
		for k, v := c.Seek(fieldRollupKey(prefix, hourOf(from), 0)); k != nil && bytes.Compare(k, end) < 0; k, v = c.Next() {
			var r data.FieldRollup
			if err := jsonUnmarshal(v, &r); err != nil {
				return err
			}
			tail := k[len(prefix):]
			hour := int64(binary.BigEndian.Uint64(tail))
			fn(time.Unix(hour*3600, 0).UTC(), int(binary.BigEndian.Uint32(tail[8:])), r)
		}
		return nil
	}
	edges := func(from, to time.Time, fn func(time.Time, int, data.FieldRollup)) error {
		c := t.b.Bucket(bucketCallAnalysisValues).Cursor()
		scope := ws + "\x00" + agentID
		end := analysisValuesKey(ws, agentID, data.IDBound(data.PrefixCall, to))
		for k, v := c.Seek(analysisValuesKey(ws, agentID, data.IDBound(data.PrefixCall, from))); k != nil && bytes.Compare(k, end) < 0 && bytes.HasPrefix(k, []byte(scope+"\x00")); k, v = c.Next() {
			var vals data.AnalysisValues
			if err := jsonUnmarshal(v, &vals); err != nil {
				return err
			}
			for _, f := range vals.Fields {
				if f.Field == field {
					fn(vals.Hour, vals.Version, data.RollupOfValue(f))
				}
			}
		}
		return nil
	}
	return data.SumFieldRollups(from, to, step, hours, edges)
}

// deleteCallAnalysis removes a deleted call's values and their contribution.
func deleteCallAnalysis(tx *bbolt.Tx, c *data.Call) error {
	return setAnalysisValues(tx, c, nil)
}

// deleteWorkspaceAnalysis removes a deleted workspace's price table, values and rollups
// (a cascade).
func deleteWorkspaceAnalysis(tx *bbolt.Tx, ws string) error {
	if err := tx.Bucket(bucketPriceTables).Delete([]byte(ws)); err != nil {
		return err
	}
	for _, b := range [][]byte{bucketCallAnalysisValues, bucketCallFieldRollups} {
		if err := deleteScopePrefix(tx.Bucket(b), ws); err != nil {
			return err
		}
	}
	return nil
}
