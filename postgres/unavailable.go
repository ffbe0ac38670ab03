package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voiceapi/voiceapi/data"
)

// unavailable reports a failure of the database rather than of the statement: the server
// is restarting, shutting down, refusing connections or gone (the connection broke). The
// request that met it did not necessarily fail to change anything (a COMMIT whose answer
// was lost may have committed), so it is answered 503 for the client to retry, not 500.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the request's own end (context.DeadlineExceeded is a net.Error too)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"): // connection exception
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // admin or crash shutdown, cannot connect now
			return true
		case pe.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// unavailableError wraps an unavailable database's failure in data.ErrStorageUnavailable,
// the cause the server answers 503 for; any other error is returned as it is.
func unavailableError(err error) error {
	if err == nil || errors.Is(err, data.ErrStorageUnavailable) || !unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", data.ErrStorageUnavailable, err)
}
