package postgres

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voiceapi/voiceapi/data"
)

// Text holding U+0000 that a reader missed is a 422 naming the body, not a 500; a full
// disk stays findable as ENOSPC.
func TestStorageErrorNamesTextHoldingNUL(t *testing.T) {
	for _, code := range []string{"22021", "22P05"} {
		err := storageError(fmt.Errorf("insert: %w", &pgconn.PgError{Code: code}))
		var e *data.Error
		if !errors.As(err, &e) || e.Code != data.EINVALID || len(e.Fields["body"]) != 1 {
			t.Errorf("SQLSTATE %s: %v, want validation_failed naming body", code, err)
		}
	}
	if err := storageError(&pgconn.PgError{Code: "53100"}); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("disk full: %v", err)
	}
}
