package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"go.etcd.io/bbolt"
)

// FileStats is where a database file's bytes go: the file as a whole, its free pages, and
// each top-level bucket (nested buckets counted in their parent's figures).
type FileStats struct {
	Path     string `json:"path"`
	FileSize int64  `json:"file_size_bytes"`
	PageSize int    `json:"page_size_bytes"`
	// Pages is the high-water mark of the file in pages (the rest of the file is
	// preallocated space bbolt has not used yet).
	Pages int64 `json:"pages"`
	// FreePages are pages a later write can reuse; compaction gives them back to the
	// file system. PendingPages are freed by a transaction still visible to a reader.
	FreePages     int   `json:"free_pages"`
	PendingPages  int   `json:"pending_pages"`
	FreeBytes     int64 `json:"free_bytes"`
	FreelistBytes int   `json:"freelist_bytes"`
	// Totals over every bucket.
	Total   BucketStats   `json:"total"`
	Buckets []BucketStats `json:"buckets"`
}

// BucketStats are one bucket's figures from bbolt's Bucket.Stats, plus the raw size of
// its keys and values.
type BucketStats struct {
	Name string `json:"name"`
	Keys int    `json:"keys"`
	// DataBytes is the sum of its keys' and values' lengths: what the records weigh
	// before any page or element header.
	DataBytes int64 `json:"data_bytes"`
	// InuseBytes are the bytes of branch and leaf pages in use: data, element headers
	// and page headers (for an inline bucket, its bytes inside the parent's page).
	InuseBytes  int64 `json:"inuse_bytes"`
	LeafInuse   int64 `json:"leaf_inuse_bytes"`
	BranchPages int   `json:"branch_pages"`
	LeafPages   int   `json:"leaf_pages"`
	// AllocBytes are the bytes of the pages the bucket owns (0 for an inline bucket).
	AllocBytes int64 `json:"alloc_bytes"`
	// Fill is InuseBytes / AllocBytes; 0 when the bucket owns no page.
	Fill   float64 `json:"fill"`
	Depth  int     `json:"depth"`
	Inline bool    `json:"inline"`
}

// Stats reads the figures of the database in dir without changing a byte of it: the file
// is opened read-only, which waits for no writer but fails fast (within lockTimeout, with
// ErrLocked) while a server holds it.
func Stats(dir string, lockTimeout time.Duration) (*FileStats, error) {
	path := filepath.Join(dir, FileName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no database at %s: %w", path, err)
	}
	// A read-only open skips the freelist unless asked: the free-page figures need it.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, PreLoadFreelist: true, Timeout: lockTimeout})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s is locked (is `voiceapi serve` running on it?); stop the server first", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer db.Close()
	return statsOf(db)
}

// statsOf gathers the figures of an open database in one read transaction.
func statsOf(db *bbolt.DB) (*FileStats, error) {
	st := &FileStats{Path: db.Path(), PageSize: db.Info().PageSize}
	if fi, err := os.Stat(db.Path()); err == nil {
		st.FileSize = fi.Size()
	}
	dbs := db.Stats()
	st.FreePages, st.PendingPages = dbs.FreePageN, dbs.PendingPageN
	// bbolt updates its byte figures of the freelist on commit only, and a read-only
	// open never commits: derive them from the page counts as bbolt does.
	st.FreeBytes = int64(st.FreePages+st.PendingPages) * int64(st.PageSize)
	st.FreelistBytes = freelistBytes(st.FreePages + st.PendingPages)
	st.Total.Name = "(all buckets)"
	err := db.View(func(tx *bbolt.Tx) error {
		st.Pages = tx.Size() / int64(st.PageSize)
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			bs := bucketFigures(string(name), b)
			st.Buckets = append(st.Buckets, bs)
			t := &st.Total
			t.Keys += bs.Keys
			t.DataBytes += bs.DataBytes
			t.InuseBytes += bs.InuseBytes
			t.LeafInuse += bs.LeafInuse
			t.BranchPages += bs.BranchPages
			t.LeafPages += bs.LeafPages
			t.AllocBytes += bs.AllocBytes
			t.Depth = max(t.Depth, bs.Depth)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	st.Total.Fill = fill(st.Total.InuseBytes, st.Total.AllocBytes)
	// Heaviest first: the reader is looking for where the bytes go.
	sort.SliceStable(st.Buckets, func(i, j int) bool {
		a, b := st.Buckets[i], st.Buckets[j]
		if a.AllocBytes != b.AllocBytes {
			return a.AllocBytes > b.AllocBytes
		}
		return a.Name < b.Name
	})
	return st, nil
}

func bucketFigures(name string, b *bbolt.Bucket) BucketStats {
	s := b.Stats()
	bs := BucketStats{
		Name:        name,
		Keys:        s.KeyN,
		InuseBytes:  int64(s.BranchInuse + s.LeafInuse),
		LeafInuse:   int64(s.LeafInuse),
		BranchPages: s.BranchPageN + s.BranchOverflowN,
		LeafPages:   s.LeafPageN + s.LeafOverflowN,
		AllocBytes:  int64(s.BranchAlloc + s.LeafAlloc),
		Depth:       s.Depth,
		Inline:      b.Root() == 0,
		DataBytes:   dataBytes(b),
	}
	if bs.Inline {
		// bbolt counts an inline bucket's bytes apart: they sit in its parent's page.
		bs.InuseBytes, bs.LeafInuse = int64(s.InlineBucketInuse), int64(s.InlineBucketInuse)
	}
	bs.Fill = fill(bs.InuseBytes, bs.AllocBytes)
	return bs
}

// dataBytes sums the lengths of b's keys and values, nested buckets' included.
func dataBytes(b *bbolt.Bucket) int64 {
	var n int64
	b.ForEach(func(k, v []byte) error {
		n += int64(len(k) + len(v))
		if v == nil {
			if nb := b.Bucket(k); nb != nil {
				n += dataBytes(nb)
			}
		}
		return nil
	})
	return n
}

func fill(inuse, alloc int64) float64 {
	if alloc == 0 {
		return 0
	}
	return float64(inuse) / float64(alloc)
}

// freelistBytes is the size of the freelist page bbolt writes for n free page ids: a page
// header, one 8-byte id each, and one more 8-byte count when n overflows 16 bits.
func freelistBytes(n int) int {
	const header, id = 16, 8
	if n >= 0xFFFF {
		n++
	}
	return header + id*n
}
