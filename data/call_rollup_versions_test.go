package data_test

import (
	"reflect"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestRollupVersions: a call's rollup carries its counts under its version; added and
// taken away they read back per version, reasons included, and a version left with no
// call disappears.
func TestRollupVersions(t *testing.T) {
	v1, v2 := 1, 2
	ms := int64(2000)
	hangup, failed := "user_hangup", "abandoned"
	calls := []*data.Call{
		{AgentVersion: &v1, Status: data.CallEnded, DurationMS: &ms, DisconnectionReason: &hangup},
		{AgentVersion: &v1, Status: data.CallFailed, DisconnectionReason: &failed},
		{AgentVersion: &v2, Status: data.CallRegistered},
		{Status: data.CallEnded},
	}
	var sum data.CallRollup
	for _, c := range calls {
		sum.Add(data.RollupOf(c), 1)
	}
	got := data.ForVersions(sum.Versions)
	want := map[string]data.CallRollup{
		"1": {Calls: 2, Ended: 1, Failed: 1, DurationMS: 2000, WithDuration: 1, Reasons: map[string]int64{hangup: 1, failed: 1}},
		"2": {Calls: 1},
		"":  {Calls: 1, Ended: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("per version %+v, want %+v", got, want)
	}
	sum.Add(data.RollupOf(calls[2]), -1)
	if _, ok := data.ForVersions(sum.Versions)["2"]; ok {
		t.Errorf("a version without calls is still counted: %v", sum.Versions)
	}
	if sum.WithoutVersions().Versions != nil || sum.Calls != 3 {
		t.Errorf("WithoutVersions: %+v", sum.WithoutVersions())
	}
}
