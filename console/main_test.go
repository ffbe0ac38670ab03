package console_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/pgtest"
)

// TestMain stops the throw-away PostgreSQL cluster the tests started when they run on
// PostgreSQL (VOICEAPI_TEST_BACKEND=postgres).
func TestMain(m *testing.M) { pgtest.Main(m) }
