package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/bolt"
)

func init() { compactSwapGrace = -1 } // the tests start no server that could be waiting

// afterLargeDelete returns filledDir's data directory (real users) after a large delete:
// a bucket of 8,000 records of about 500 bytes, written and then dropped, leaves its pages
// free in the file.
func afterLargeDelete(t *testing.T) string {
	t.Helper()
	dir := filledDir(t)
	db, err := bbolt.Open(filepath.Join(dir, bolt.FileName), 0o600, &bbolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	value := bytes.Repeat([]byte("x"), 500)
	if err := db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("scratch"))
		if err != nil {
			return err
		}
		for i := range 8_000 {
			if err := b.Put(fmt.Appendf(nil, "%08d", i), value); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.DeleteBucket([]byte("scratch")) }); err != nil {
		t.Fatal(err)
	}
	return dir
}

// contents is every bucket's keys and values, by bucket, with its sequence.
func contents(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, bolt.FileName), 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]map[string]string{}
	db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			m := map[string]string{"(sequence)": fmt.Sprint(b.Sequence())}
			b.ForEach(func(k, v []byte) error { m[string(k)] = string(v); return nil })
			out[string(name)] = m
			return nil
		})
	})
	return out
}

func TestStatsCommand(t *testing.T) {
	dir := afterLargeDelete(t)
	path := filepath.Join(dir, bolt.FileName)
	before, _ := os.ReadFile(path)

	out, _, err := run(t, "", "stats", "--data", dir)
	if err != nil {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	for _, want := range []string{"page size 4096", "pages used", "free", "freelist", "BUCKET", "KEYS", "ALLOC", "FILL", "(all buckets)"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing from:\n%s", want, out)
		}
	}
	var usersLine string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "users" {
			usersLine = l
		}
	}
	if f := strings.Fields(usersLine); len(f) != 9 || f[1] != "40" {
		t.Errorf("users row %q: want 40 keys and nine columns", usersLine)
	}

	out, _, err = run(t, "", "stats", "--data", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st bolt.FileStats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	fi, _ := os.Stat(path)
	if st.FileSize != fi.Size() || st.PageSize != 4096 || st.Pages*int64(st.PageSize) > st.FileSize {
		t.Errorf("file figures: %+v (file %d bytes)", st, fi.Size())
	}
	// The dropped bucket's 8,000 records (4 MB) left at least 900 free pages.
	if st.FreePages < 900 || st.FreeBytes != int64(st.FreePages)*4096 || st.FreelistBytes < 8*st.FreePages {
		t.Errorf("free figures: %d pages, %d bytes, freelist %d bytes", st.FreePages, st.FreeBytes, st.FreelistBytes)
	}
	var keys int
	var users *bolt.BucketStats
	for i, b := range st.Buckets {
		keys += b.Keys
		if b.Name == "users" {
			users = &st.Buckets[i]
		}
	}
	if users == nil || users.Keys != 40 || users.LeafPages < 1 || users.AllocBytes < 4096 || users.Fill <= 0 || users.Fill > 1 || users.DataBytes <= 0 || users.DataBytes > users.LeafInuse {
		t.Errorf("users bucket: %+v", users)
	}
	if keys != st.Total.Keys || st.Total.Keys < 40 {
		t.Errorf("total keys %d, sum of buckets %d", st.Total.Keys, keys)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("stats changed the database file")
	}

	held := openDir(t, dir)
	defer held.Close()
	if _, _, err := run(t, "", "stats", "--data", dir); err == nil || !strings.Contains(err.Error(), "stop the server") {
		t.Errorf("stats on a held database: %v", err)
	}
}

func TestCompactCommand(t *testing.T) {
	dir := afterLargeDelete(t)
	path := filepath.Join(dir, bolt.FileName)
	want := contents(t, dir)
	fi, _ := os.Stat(path)
	sizeBefore := fi.Size()

	out, errOut, err := run(t, "", "compact", "--data", dir)
	if err != nil {
		t.Fatalf("compact: %v\n%s%s", err, out, errOut)
	}
	fi, _ = os.Stat(path)
	if fi.Size() > sizeBefore/4 {
		t.Errorf("%d bytes before, %d after: the dropped bucket's pages were not given back", sizeBefore, fi.Size())
	}
	if !strings.Contains(out, fmt.Sprintf("%d bytes", sizeBefore)) || !strings.Contains(out, fmt.Sprintf("→ %d bytes", fi.Size())) {
		t.Errorf("output does not give the sizes before and after:\n%s", out)
	}
	if errOut != "" {
		t.Errorf("output on a non-terminal's standard error: %q", errOut)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	got := contents(t, dir)
	if len(got) != len(want) {
		t.Errorf("%d buckets before, %d after", len(want), len(got))
	}
	for name, kv := range want {
		if len(got[name]) != len(kv) {
			t.Errorf("bucket %s: %d keys before, %d after", name, len(kv), len(got[name]))
		}
		for k, v := range kv {
			if got[name][k] != v {
				t.Errorf("bucket %s key %q: %q before, %q after", name, k, v, got[name][k])
			}
		}
	}
	if out, _, err := run(t, "", "check", "--data", dir); err != nil {
		t.Fatalf("check after compact: %v\n%s", err, out)
	}
	out, _, err = run(t, "", "user", "list", "--data", dir)
	if err != nil || strings.Count(out, "@example.com") != 40 {
		t.Errorf("user list after compact: %v\n%s", err, out)
	}

	// --keep-old, on a terminal: the bar is drawn and cleared, the old file named.
	out, errOut, err = runOnTerminal(t, "compact", "--data", dir, "--keep-old")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "compacting") || !strings.Contains(errOut, "\r") {
		t.Errorf("no progress bar on a terminal: %q", errOut)
	}
	old, _ := filepath.Glob(filepath.Join(dir, bolt.FileName+".old-*"))
	if len(old) != 1 || !strings.Contains(out, old[0]) {
		t.Errorf("old files %v; output:\n%s", old, out)
	}

	held := openDir(t, dir)
	defer held.Close()
	start := time.Now()
	if _, _, err := run(t, "", "compact", "--data", dir); err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), "stop the server") {
		t.Errorf("compact on a held database: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to refuse", d)
	}
}

// TestCompactFailureLeavesDatabaseWhole: the new file cannot grow past 128 KiB (this
// process's RLIMIT_FSIZE, as a full disk would refuse it) while the live data is about
// 4 MB. The command fails, voiceapi.db is byte for byte the old file, `voiceapi check`
// passes, and no temporary file is left.
func TestCompactFailureLeavesDatabaseWhole(t *testing.T) {
	dir := filledDir(t)
	path := filepath.Join(dir, bolt.FileName)
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("scratch"))
		for i := 0; err == nil && i < 8_000; i++ {
			err = b.Put(fmt.Appendf(nil, "%08d", i), bytes.Repeat([]byte("x"), 500))
		}
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	original, _ := os.ReadFile(path)

	// The limit is set in a child process: in this one it would also stop the test
	// framework's own log.
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactFailureChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VOICEAPI_COMPACT_LIMITED_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "skip: ") {
		t.Skip(string(out))
	}
	if err != nil || !strings.Contains(string(out), "file too large") {
		t.Fatalf("compact into a file that cannot grow: %v\n%s", err, out)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, original) {
		t.Fatal("a failed compaction changed voiceapi.db")
	}
	if out, _, err := run(t, "", "check", "--data", dir); err != nil || !strings.Contains(out, ": ok (") {
		t.Fatalf("check after a failed compaction: %v\n%s", err, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, bolt.FileName+".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestCompactFailureChild is TestCompactFailureLeavesDatabaseWhole's child process: it runs
// `voiceapi compact` with RLIMIT_FSIZE at 128 KiB and SIGXFSZ ignored, and prints the
// outcome. Without its environment variable it does nothing.
func TestCompactFailureChild(t *testing.T) {
	dir := os.Getenv("VOICEAPI_COMPACT_LIMITED_DIR")
	if dir == "" {
		return
	}
	signal.Ignore(syscall.SIGXFSZ)
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		fmt.Println("skip: no RLIMIT_FSIZE:", err)
		return
	}
	limit.Cur = 128 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		fmt.Println("skip: cannot lower RLIMIT_FSIZE:", err)
		return
	}
	out, errOut, err := run(t, "", "compact", "--data", dir)
	fmt.Printf("error: %v\n%s%s", err, out, errOut)
}

// TestCompactSmallDatabaseSaysWhy: on a small database bbolt's growth step keeps the file's
// size, and the report said "65536 bytes → 65536 bytes" as though nothing had been done.
// It now gives the free pages before and after and why the file kept its size; a second compaction,
// with nothing left to give back, says the database is already compact.
func TestCompactSmallDatabaseSaysWhy(t *testing.T) {
	dir := filledDir(t)
	path := filepath.Join(dir, bolt.FileName)
	if out, _, err := run(t, "", "compact", "--data", dir); err != nil { // tight pages to start from
		t.Fatalf("compact: %v\n%s", err, out)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// A few records written and dropped: free pages, too few to change the growth step.
	if err := db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("scratch"))
		for i := range 20 {
			if err == nil {
				err = b.Put(fmt.Appendf(nil, "%08d", i), bytes.Repeat([]byte("x"), 500))
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.DeleteBucket([]byte("scratch")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fi, _ := os.Stat(path)
	size := fi.Size()

	out, _, err := run(t, "", "compact", "--data", dir)
	if err != nil {
		t.Fatalf("compact: %v\n%s", err, out)
	}
	if fi, _ := os.Stat(path); fi.Size() != size {
		t.Fatalf("the file went from %d to %d bytes: this test needs one that keeps its size", size, fi.Size())
	}
	if !strings.Contains(out, "free pages") || !strings.Contains(out, "keeps its size") || !strings.Contains(out, "steps") {
		t.Errorf("the same size before and after, unexplained:\n%s", out)
	}
	if strings.Contains(out, "already compact") {
		t.Errorf("free pages were given back, yet:\n%s", out)
	}
	out, _, err = run(t, "", "compact", "--data", dir)
	if err != nil {
		t.Fatalf("second compact: %v\n%s", err, out)
	}
	if !strings.Contains(out, "already compact") {
		t.Errorf("a second compaction does not say the database was already compact:\n%s", out)
	}
}
