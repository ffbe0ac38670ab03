package bolt_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// TestStore runs the storage suite on bbolt.
func TestStore(t *testing.T) { storetest.Run(t, testkit.OpenStore) }
