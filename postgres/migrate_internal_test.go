package postgres

import (
	"slices"
	"strings"
	"testing"
)

// TestPendingMigrationsByNumber: migrations are applied by number, so a version handed to
// work that lands later (0008 after 0010) is applied when it arrives, and a database
// holding a version this binary does not know is refused.
func TestPendingMigrationsByNumber(t *testing.T) {
	all := []Migration{{Version: 1, Name: "core"}, {Version: 2, Name: "b"}, {Version: 8, Name: "late"}, {Version: 10, Name: "jobs"}}
	versions := func(ms []Migration) []int {
		var out []int
		for _, m := range ms {
			out = append(out, m.Version)
		}
		return out
	}
	cases := []struct {
		applied []int
		want    []int
	}{
		{nil, []int{1, 2, 8, 10}},
		{[]int{1, 2}, []int{8, 10}},
		{[]int{1, 2, 10}, []int{8}},
		{[]int{1, 2, 8, 10}, nil},
	}
	for _, c := range cases {
		applied := map[int]bool{}
		for _, v := range c.applied {
			applied[v] = true
		}
		got, err := pendingMigrations(all, applied)
		if err != nil || !slices.Equal(versions(got), c.want) {
			t.Errorf("applied %v: pending %v, %v; want %v", c.applied, versions(got), err, c.want)
		}
	}
	_, err := pendingMigrations(all, map[int]bool{1: true, 9: true})
	if err == nil || !strings.Contains(err.Error(), "version 9") || !strings.Contains(err.Error(), "upgrade voiceapi") {
		t.Errorf("a database with an unknown version 9: %v, want a refusal naming it", err)
	}
	if LatestVersion(all) != 10 || LatestVersion(nil) != 0 {
		t.Errorf("LatestVersion = %d, %d", LatestVersion(all), LatestVersion(nil))
	}
}

// TestMigrationsAreNumberedOnce: the embedded files have distinct numbers.
func TestMigrationsAreNumberedOnce(t *testing.T) {
	all, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || all[0].Version != 1 {
		t.Fatalf("migrations %v, want them to start at 1", all)
	}
}
