package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) backupRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/admin/backup", Need: data.Admin, Long: true, handle: s.handleBackup},
	}
}

// handleBackup: GET /api/v1/admin/backup — streams a tar.gz backup of the instance (a
// consistent database snapshot, the stored files and, unless ?exclude_secret_key=true,
// the secret key) while the server keeps serving. Instance admins only.
func (s *Server) handleBackup(w http.ResponseWriter, r *http.Request) error {
	if s.svc.Backup == nil {
		return data.Errorf(data.ENOTFOUND, "This server keeps its records in PostgreSQL, which this route cannot copy: back them up with pg_dump or continuous archiving for point-in-time recovery, and keep the secret key with them (docs/scale-out.md, Backups).")
	}
	var opts data.BackupOptions
	var optErr error
	if v := r.URL.Query().Get("exclude_secret_key"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			optErr = data.FieldError("exclude_secret_key", "The exclude_secret_key field must be true or false.")
		}
		opts.ExcludeSecretKey = b
	}
	if err := withQueryFaults(r, optErr); err != nil {
		return err
	}
	// The snapshot is taken before anything is written, so a failure here is still a
	// proper JSON error.
	archive, err := s.svc.Backup.Backup(r.Context(), opts)
	if err != nil {
		return err
	}
	defer archive.Close()
	// The server's write timeout suits API calls, not a download of the whole database:
	// lift it for this response. A client that stops reading is cut by the TCP stack.
	if err := http.NewResponseController(w).SetWriteDeadline(time.Time{}); err != nil {
		s.log.Warn("backup: cannot lift the write deadline", "error", err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Content-Disposition", `attachment; filename="`+archive.Name()+`"`)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := archive.WriteTo(w); err != nil {
		// The status is sent: abort the connection so the client sees a truncated
		// transfer instead of an archive that looks complete.
		s.log.Error("backup stream failed", "request_id", requestIDFrom(r.Context()), "error", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// takesBackups reports whether GET /api/v1/admin/backup takes one: not without a backup
// service, nor on a store that cannot snapshot itself (PostgreSQL), where it answers 404.
func (s *Server) takesBackups() bool {
	if s.svc.Backup == nil {
		return false
	}
	a, ok := s.svc.Backup.(interface{ Available() bool })
	return !ok || a.Available()
}
