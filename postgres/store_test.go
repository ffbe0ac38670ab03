package postgres_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestStore runs the storage suite on PostgreSQL.
func TestStore(t *testing.T) { storetest.Run(t, testkit.OpenPostgresStore) }
