package bolt

// Chunks are persisted in bucketKBChunks, in order per source; the service builds its
// in-memory retrieval index from them.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

func chunkPrefix(kbID, sourceID string) []byte {
	return append(indexKey(kbID, sourceID), 0)
}

// encodeChunk packs a chunk as uvarint(len(text)) text, then its vector as little-endian
// float32s: a third of the size of JSON numbers, and no parsing on an index build.
func encodeChunk(c data.SourceChunk) []byte {
	buf := make([]byte, 0, binary.MaxVarintLen64+len(c.Text)+4*len(c.Vector))
	buf = binary.AppendUvarint(buf, uint64(len(c.Text)))
	buf = append(buf, c.Text...)
	for _, f := range c.Vector {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
	}
	return buf
}

func decodeChunk(v []byte) (data.SourceChunk, error) {
	n, k := binary.Uvarint(v)
	if k <= 0 || uint64(len(v)-k) < n || (uint64(len(v)-k)-n)%4 != 0 {
		return data.SourceChunk{}, errors.New("malformed chunk")
	}
	c := data.SourceChunk{Text: string(v[k : k+int(n)])}
	rest := v[k+int(n):]
	if len(rest) > 0 {
		c.Vector = make([]float32, len(rest)/4)
		for i := range c.Vector {
			c.Vector[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
		}
	}
	return c, nil
}

// putChunks stores the chunks of one source, keyed by position.
func putChunks(tx *bbolt.Tx, kbID, sourceID string, chunks []data.SourceChunk) error {
	b := tx.Bucket(bucketKBChunks)
	for i, c := range chunks {
		key := append(chunkPrefix(kbID, sourceID), fmt.Sprintf("%06d", i)...)
		if err := b.Put(key, encodeChunk(c)); err != nil {
			return err
		}
	}
	return nil
}

// PutSourceChunks implements service.KnowledgeTx.
func (t tx) PutSourceChunks(kbID, sourceID string, chunks []data.SourceChunk) error {
	if err := deletePrefix(t.b.Bucket(bucketKBChunks), chunkPrefix(kbID, sourceID)); err != nil {
		return err
	}
	if err := bumpChunksRevision(t.b, kbID); err != nil {
		return err
	}
	return putChunks(t.b, kbID, sourceID, chunks)
}

// SourceChunks implements service.KnowledgeTx.
func (t tx) SourceChunks(kbID, sourceID string) ([]data.SourceChunk, error) {
	prefix := chunkPrefix(kbID, sourceID)
	var out []data.SourceChunk
	c := t.b.Bucket(bucketKBChunks).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		sc, err := decodeChunk(v)
		if err != nil {
			return nil, fmt.Errorf("chunk %q: %w", k, err)
		}
		out = append(out, sc)
	}
	return out, nil
}

// chunksRevisionKey holds a knowledge base's chunk revision: "<kb>\x01" sorts after every
// "<kb>\x00…" chunk key, so chunk walks never meet it.
func chunksRevisionKey(kbID string) []byte { return append([]byte(kbID), 1) }

// bumpChunksRevision moves the knowledge base's chunk revision on.
func bumpChunksRevision(tx *bbolt.Tx, kbID string) error {
	b := tx.Bucket(bucketKBChunks)
	var rev uint64
	if v := b.Get(chunksRevisionKey(kbID)); len(v) == 8 {
		rev = binary.BigEndian.Uint64(v)
	}
	return b.Put(chunksRevisionKey(kbID), binary.BigEndian.AppendUint64(nil, rev+1))
}

// ChunksRevision implements service.KnowledgeTx.
func (t tx) ChunksRevision(kbID string) (uint64, error) {
	if v := t.b.Bucket(bucketKBChunks).Get(chunksRevisionKey(kbID)); len(v) == 8 {
		return binary.BigEndian.Uint64(v), nil
	}
	return 0, nil
}

// EachSourceChunks implements service.KnowledgeTx: one cursor walk over the knowledge
// base's keys, which keeps each source's chunks together and in order.
func (t tx) EachSourceChunks(kbID string, fn func(sourceID string, chunks []data.SourceChunk) error) error {
	prefix := indexKey(kbID, "")
	cur := t.b.Bucket(bucketKBChunks).Cursor()
	var source string
	var chunks []data.SourceChunk
	flush := func() error {
		if len(chunks) == 0 {
			return nil
		}
		err := fn(source, chunks)
		chunks = chunks[:0]
		return err
	}
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		rest := k[len(prefix):]
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			continue
		}
		if src := rest[:i]; string(src) != source {
			if err := flush(); err != nil {
				return err
			}
			source = string(src)
		}
		c, err := decodeChunk(v)
		if err != nil {
			return fmt.Errorf("chunk %q: %w", k, err)
		}
		chunks = append(chunks, c)
	}
	return flush()
}
