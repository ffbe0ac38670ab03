package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voiceapi/voiceapi/data"
)

// Failures of the database are data.ErrStorageUnavailable (503); failures of a statement
// and the request's own end are not.
func TestUnavailableClassifiesFailures(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"administrator shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"crash shutdown", &pgconn.PgError{Code: "57P02"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"connection refused", fmt.Errorf("acquiring: %w", refused), true},
		{"unexpected EOF", fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), true},
		{"conn closed", pgconn.ErrConnClosed, true},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"disk full", &pgconn.PgError{Code: "53100"}, false},
		{"request deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), false},
		{"client gone", context.Canceled, false},
		{"a bug", errors.New("decoding call: bad json"), false},
	} {
		got := storageError(c.err)
		if is := errors.Is(got, data.ErrStorageUnavailable); is != c.want {
			t.Errorf("%s: %v unavailable %v, want %v", c.name, got, is, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: the cause is lost: %v", c.name, got)
		}
	}
}
