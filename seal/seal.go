// Package seal encrypts credentials at rest with XChaCha20-Poly1305 (conventions §9)
// under the instance's secret key, shared by every storage engine and every replica.
package seal

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/voiceapi/voiceapi/internal/fsync"
)

// KeyFile holds the key in the data directory when VOICEAPI_SECRET_KEY is unset.
const KeyFile = "secret.key"

// sealedPrefix marks an encrypted value, so plain and sealed values are never confused.
const sealedPrefix = "sealed:v1:"

// Sealer encrypts and decrypts credentials under one key.
type Sealer struct{ key []byte }

// Load takes the key from key, else VOICEAPI_SECRET_KEY (64 hex characters or
// base64 of 32 bytes), else the key file in dir, created with mode 0600 on first use.
func Load(dir string, key []byte) (*Sealer, error) {
	if key == nil {
		if env := strings.TrimSpace(os.Getenv("VOICEAPI_SECRET_KEY")); env != "" {
			var err error
			if key, err = parseKey(env); err != nil {
				return nil, fmt.Errorf("VOICEAPI_SECRET_KEY: %w", err)
			}
		}
	}
	if key == nil {
		var err error
		if key, err = loadOrCreateKeyFile(filepath.Join(dir, KeyFile)); err != nil {
			return nil, err
		}
	}
	if len(key) != chacha20poly1305.KeySize {
		return nil, fmt.Errorf("secret key must be %d bytes, got %d", chacha20poly1305.KeySize, len(key))
	}
	return &Sealer{key: key}, nil
}

// ParseKey reads a key as VOICEAPI_SECRET_KEY and the key file give it: 64 hex characters
// or base64 of 32 bytes, surrounding space ignored.
func ParseKey(s string) ([]byte, error) { return parseKey(strings.TrimSpace(s)) }

func parseKey(s string) ([]byte, error) {
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	return nil, errors.New("want 32 bytes as 64 hex characters or base64")
}

func loadOrCreate(path string) (key []byte, created bool, err error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		key, err := parseKey(strings.TrimSpace(string(raw)))
		if err == nil {
			removeStrayKeyFiles(path)
		}
		return key, false, err
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, false, err
	}
	if err := createKeyFile(path, hex.EncodeToString(key)+"\n"); err != nil {
		if errors.Is(err, fs.ErrExist) { // another process made it meanwhile: its key it is
			if raw, err := os.ReadFile(path); err == nil {
				key, err := parseKey(strings.TrimSpace(string(raw)))
				return key, false, err
			}
		}
		return nil, false, err
	}
	return key, true, nil
}

// createKeyFile writes text under a temporary name, fsyncs it, links it to path (never
// replacing a file there) and fsyncs the directory. A crash at any moment leaves no key
// file or the whole key, never an empty one that every later start would refuse; and once
// it returns, the key survives a power cut as the records sealed with it do.
func createKeyFile(path, text string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*") // mode 0600
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := writeKey(f, text); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := linkKey(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating %s: %w", path, err)
		}
		// A filesystem without hard links (vfat, some network mounts): a rename, which
		// would replace a key another process made in the instant since the check above,
		// so it is taken only when the name is still free.
		if _, statErr := os.Lstat(path); !errors.Is(statErr, fs.ErrNotExist) {
			return fmt.Errorf("creating %s: %w", path, fs.ErrExist)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("creating %s: %w", path, err)
		}
	}
	return fsync.Dir(dir)
}

// removeStrayKeyFiles removes the temporary files of key files that a process killed
// while creating one left beside the key (each holds a key never used, still a secret).
// It runs once the key is there: a process creating one at that moment finds its link
// refused, or its file gone, and reads the key that is there. Best effort: a file left
// is harmless.
func removeStrayKeyFiles(path string) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+"-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// linkKey links the written key to its name; a test makes it fail as a filesystem
// without hard links does.
var linkKey = os.Link

// writeKey writes a new key's text; a test cuts it short as a crash would.
var writeKey = func(f *os.File, text string) error {
	_, err := f.WriteString(text)
	return err
}

// DeriveKey returns a 32-byte key for one purpose (info names it), derived from the
// instance's secret key with HKDF-SHA256: the audit chain's HMAC key, say, is as secret
// as the key, yet not the key itself.
func (s *Sealer) DeriveKey(info string) []byte {
	k, err := hkdf.Key(sha256.New, s.key, nil, info, 32)
	if err != nil {
		panic(err) // only for lengths HKDF cannot give; 32 is always fine
	}
	return k
}

// Seal encrypts plain; "" stays "" (no credential).
func (s *Sealer) Seal(plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	aead, err := chacha20poly1305.NewX(s.key)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(plain), nil)), nil
}

// IsSealed reports whether v has the form Seal gives, so that a value stored in the clear
// before its field was sealed can be told from a sealed one.
func IsSealed(v string) bool { return strings.HasPrefix(v, sealedPrefix) }

// Open decrypts a value made by Seal.
func (s *Sealer) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	if !strings.HasPrefix(sealed, sealedPrefix) {
		return "", errors.New("value is not sealed")
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed[len(sealedPrefix):])
	if err != nil {
		return "", fmt.Errorf("decoding sealed value: %w", err)
	}
	aead, err := chacha20poly1305.NewX(s.key)
	if err != nil {
		return "", err
	}
	if len(raw) < aead.NonceSize() {
		return "", errors.New("sealed value too short")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return "", errors.New("sealed value does not open with this key (was VOICEAPI_SECRET_KEY or secret.key changed?)")
	}
	return string(plain), nil
}
