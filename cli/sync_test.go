package cli

import (
	"bytes"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/internal/pgtest"

	"golang.org/x/crypto/bcrypt"
)

type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func TestMain(m *testing.M) {
	adminOptions.PasswordCost = bcrypt.MinCost // production cost 12 is slow under -race
	pgtest.Main(m)
}
