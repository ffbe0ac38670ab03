package server

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// A streamed reply whose store fails below storage ends with the error frame writeError
// would have sent: the database unavailable, or upgraded by a newer voiceapi, is a 503's
// code and message, not an internal error.
func TestStreamErrorTellsCausesBelowStorage(t *testing.T) {
	for _, c := range []struct {
		cause error
		code  string
	}{
		{data.ErrStorageSuperseded, data.EUNAVAILABLE},
		{data.ErrStorageUnavailable, data.EUNAVAILABLE},
		{syscall.ENOSPC, data.ESTORAGEFULL},
	} {
		got := streamError(fmt.Errorf("storing the turn: %w", c.cause), "req-1")
		if got.Code != c.code || got.Message != data.ErrorMessage(classify(c.cause)) {
			t.Errorf("%v: frame %+v, want code %s with its message", c.cause, got, c.code)
		}
	}
	if got := streamError(fmt.Errorf("a bug"), "req-1"); got.Code != data.EINTERNAL {
		t.Errorf("an unknown error: frame %+v, want internal_error", got)
	}
}
