package bolt_test

import (
	"bytes"
	"errors"
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

// fillAndDelete opens a real database in a new directory, adds n records of about 300
// bytes to a bucket of their own, plus a nested bucket with a sequence, then deletes all
// but every tenth record: a file full of free pages. It returns the directory.
func fillAndDelete(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 300)
	err = db.Bolt().Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("scratch"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := b.Put(fmt.Appendf(nil, "key-%08d", i), append(fmt.Appendf(nil, "%d:", i), value...)); err != nil {
				return err
			}
		}
		nested, err := b.CreateBucket([]byte("nested"))
		if err != nil {
			return err
		}
		if err := nested.SetSequence(42); err != nil {
			return err
		}
		return nested.Put([]byte("inner"), []byte("value"))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Bolt().Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("scratch"))
		for i := range n {
			if i%10 != 0 {
				if err := b.Delete(fmt.Appendf(nil, "key-%08d", i)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dump reads every bucket (nested ones by their path), its sequence, and every key and
// value of the database file at path into one comparable map.
func dump(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	var walk func(prefix string, b *bbolt.Bucket)
	walk = func(prefix string, b *bbolt.Bucket) {
		out[prefix+" sequence"] = fmt.Sprint(b.Sequence())
		b.ForEach(func(k, v []byte) error {
			if v == nil {
				walk(prefix+"/"+string(k), b.Bucket(k))
			} else {
				out[prefix+" "+string(k)] = string(v)
			}
			return nil
		})
	}
	db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error { walk(string(name), b); return nil })
	})
	return out
}

// checkFile fails the test unless the file passes bbolt's consistency check.
func checkFile(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bbolt.Tx) error {
		for fault := range tx.Check() {
			t.Errorf("%s: %v", path, fault)
		}
		return nil
	})
}

func TestCompactShrinksAndKeepsEveryRecord(t *testing.T) {
	dir := fillAndDelete(t, 20_000)
	path := filepath.Join(dir, bolt.FileName)
	before := dump(t, path)
	if len(before) < 2_000 {
		t.Fatalf("only %d entries to compare", len(before))
	}
	statsBefore, err := bolt.Stats(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var calls, lastDone, lastTotal int64
	res, err := bolt.Compact(dir, bolt.CompactOptions{SwapGrace: -1, TxMaxSize: 64 << 10, Progress: func(done, total int64) {
		calls++
		if done < lastDone || done > total {
			t.Errorf("progress went %d → %d of %d", lastDone, done, total)
		}
		lastDone, lastTotal = done, total
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.After >= res.Before || res.After > res.Before/3 {
		t.Errorf("compaction took %d bytes to %d: expected it to shrink to a third or less", res.Before, res.After)
	}
	if fi, _ := os.Stat(path); fi.Size() != res.After {
		t.Errorf("reported %d bytes after, the file has %d", res.After, fi.Size())
	}
	if calls < 2 || lastDone != lastTotal || lastTotal != res.DataBytes {
		t.Errorf("progress: %d calls, last %d of %d; %d bytes copied", calls, lastDone, lastTotal, res.DataBytes)
	}
	after := dump(t, path)
	if len(after) != len(before) {
		t.Errorf("%d entries before, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%q: %.40q before, %.40q after", k, v, after[k])
		}
	}
	checkFile(t, path)
	// No temporary file left behind, no old file unless asked for.
	entries, _ := filepath.Glob(filepath.Join(dir, bolt.FileName+".*"))
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	statsAfter, err := bolt.Stats(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if statsBefore.FreePages == 0 || statsAfter.FreePages >= statsBefore.FreePages {
		t.Errorf("free pages %d before, %d after", statsBefore.FreePages, statsAfter.FreePages)
	}
	if statsAfter.Total.Keys != statsBefore.Total.Keys || statsAfter.Total.DataBytes != statsBefore.Total.DataBytes {
		t.Errorf("stats before %+v, after %+v", statsBefore.Total, statsAfter.Total)
	}
	// The server opens the compacted file as its own.
	db, err := bolt.Open(dir, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestCompactKeepOld(t *testing.T) {
	dir := fillAndDelete(t, 2_000)
	path := filepath.Join(dir, bolt.FileName)
	original, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bolt.Compact(dir, bolt.CompactOptions{KeepOld: true, SwapGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := os.ReadFile(res.OldPath)
	if err != nil || !bytes.Equal(kept, original) {
		t.Fatalf("old file %s: %v, equal to the original: %t", res.OldPath, err, bytes.Equal(kept, original))
	}
	if !strings.HasPrefix(filepath.Base(res.OldPath), bolt.FileName+".old-") {
		t.Errorf("old file named %s", res.OldPath)
	}
	if a, b := dump(t, path), dump(t, res.OldPath); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("the kept file and the compacted one differ in content")
	}
}

// TestCompactFailureLeavesOriginal makes the new file's writes fail part way, as a full
// disk would: the file size limit (RLIMIT_FSIZE) is set below what the compacted file
// needs, in a child process (a limit in this one would also stop the test framework's own
// log). voiceapi.db must be byte for byte what it was, pass the check, and no temporary
// file may remain.
func TestCompactFailureLeavesOriginal(t *testing.T) {
	if dir := os.Getenv("VOICEAPI_COMPACT_LIMITED_DIR"); dir != "" {
		fmt.Println(underFileSizeLimit(128<<10, func() error {
			_, err := bolt.Compact(dir, bolt.CompactOptions{SwapGrace: -1})
			return err
		}))
		return
	}
	dir := fillAndDelete(t, 20_000)
	path := filepath.Join(dir, bolt.FileName)
	original, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := runLimitedChild(t, "TestCompactFailureLeavesOriginal", "VOICEAPI_COMPACT_LIMITED_DIR="+dir)
	// The failure must be the one provoked, not some other refusal before any write.
	if !strings.Contains(out, "file too large") {
		t.Fatalf("compaction into a file that cannot grow: %s", out)
	}
	now, err2 := os.ReadFile(path)
	if err2 != nil || !bytes.Equal(now, original) {
		t.Fatalf("voiceapi.db changed by a failed compaction (%v)", err2)
	}
	checkFile(t, path)
	if left, _ := filepath.Glob(filepath.Join(dir, bolt.FileName+".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// underFileSizeLimit runs fn with this process's RLIMIT_FSIZE at limit and SIGXFSZ
// ignored (so a write past it fails with EFBIG instead of killing the process), and
// returns what to print for the parent: fn's error, or why the limit could not be set.
func underFileSizeLimit(limit uint64, fn func() error) string {
	signal.Ignore(syscall.SIGXFSZ)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		return "skip: no RLIMIT_FSIZE: " + err.Error()
	}
	lowered := old
	lowered.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lowered); err != nil {
		return "skip: cannot lower RLIMIT_FSIZE: " + err.Error()
	}
	return fmt.Sprint("error: ", fn())
}

// runLimitedChild runs test again in a child process with env set, and returns its
// output; it skips the test when the child could not lower the limit.
func runLimitedChild(t *testing.T, test, env string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "skip: ") {
		t.Skip(string(out))
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return string(out)
}

func TestCompactRefusesAHeldDatabase(t *testing.T) {
	dir := fillAndDelete(t, 100)
	held, err := bolt.Open(dir, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	start := time.Now()
	_, err = bolt.Compact(dir, bolt.CompactOptions{LockTimeout: 200 * time.Millisecond})
	if !errors.Is(err, bolt.ErrLocked) || !strings.Contains(err.Error(), "stop the server") {
		t.Errorf("compaction of a held database: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v to refuse", d)
	}
	if _, err := bolt.Compact(filepath.Join(dir, "missing"), bolt.CompactOptions{}); err == nil || !strings.Contains(err.Error(), "no database") {
		t.Errorf("missing directory: %v", err)
	}
}
