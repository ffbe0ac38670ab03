//go:build voiceapi_newer

package postgres

// Built with -tags voiceapi_newer, and only by a test (scaleout_fence_test.go), this
// binary plays a newer voiceapi in a rolling upgrade: its migrations are this one's and
// one more, which marks the agents stored once it has committed (written_after_newer,
// true by default; NULL for those stored before), so that a test can tell what an older
// replica wrote after it. No release is built with the tag (in a test, AsNewerBinary
// plays the same part).

import (
	"fmt"
	"io/fs"
	"log"
	"testing/fstest"
)

func init() {
	all, err := Migrations()
	if err != nil {
		log.Fatal(err)
	}
	newer := fstest.MapFS{}
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		body, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			log.Fatal(err)
		}
		newer["migrations/"+e.Name()] = &fstest.MapFile{Data: body}
	}
	newer[fmt.Sprintf("migrations/%04d_from_a_newer_voiceapi.sql", LatestVersion(all)+1)] = &fstest.MapFile{Data: []byte(`
		ALTER TABLE agents ADD COLUMN written_after_newer boolean;
		ALTER TABLE agents ALTER COLUMN written_after_newer SET DEFAULT true;`)}
	migrationSource = newer
}
