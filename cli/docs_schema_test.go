package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
)

// TestDocsUpgradingNamesTheSchemaVersion: docs/upgrading.md tells the operator the
// current schema version of the database file and lists what each version changed; it
// said 28 when a new file was at 30.
func TestDocsUpgradingNamesTheSchemaVersion(t *testing.T) {
	db, err := bolt.Open(t.TempDir(), bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	version, err := db.SchemaVersion()
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "upgrading.md"))
	if err != nil {
		t.Fatal(err)
	}
	current := regexp.MustCompile(`The current version is \*\*(\d+)\*\*`).FindSubmatch(doc)
	if current == nil {
		t.Fatal(`docs/upgrading.md no longer says "The current version is **N**"`)
	}
	if n, _ := strconv.Atoi(string(current[1])); n != version {
		t.Errorf("docs/upgrading.md says the current version is %d; a new file is at %d", n, version)
	}
	last := 0
	for _, m := range regexp.MustCompile(`(?m)^- Schema (\d+):`).FindAllSubmatch(doc, -1) {
		if n, _ := strconv.Atoi(string(m[1])); n > last {
			last = n
		}
	}
	if last != version {
		t.Errorf("docs/upgrading.md describes schema versions up to %d; a new file is at %d", last, version)
	}
}
