package search

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/redact"
)

// OpenClaw's own memory index is read by the caller (it knows the state
// dirs and the formats); SyncMemoryIndexes keeps the search index's
// memory-index chunks equal to what it read (see clawledger.MemoryIndex).

// FoundMemoryIndex is a memory index database found in a state dir.
type FoundMemoryIndex struct {
	StateDir, Rel string
	Stamp         string // what it is read at: an unchanged stamp is not read again
	// Read reads its files whose chunks are hits.
	Read func(ctx context.Context) ([]MemoryIndexDoc, error)
	// Origins are the sessions its memory entries came from (kept with
	// its chunks, written when they are).
	Origins []clawledger.MemoryEntryOrigin
}

// MemoryIndexDoc is a file of a memory index with its chunks.
type MemoryIndexDoc struct {
	File    clawledger.MemoryIndexFile
	MtimeMs int64 // the file's modification time, when OpenClaw indexed it
	Chunks  []MemoryIndexChunk
}

// MemoryIndexChunk is a chunk as OpenClaw stored it.
type MemoryIndexChunk struct {
	StartLine, EndLine int64
	Text               string
	Hash               string // OpenClaw's: sha256 (hex) of Text
	// Vector is OpenClaw's embedding of Text when it is of the stored
	// vectors' space (same endpoint and model), else nil: the chunk's
	// vector then, rather than a new embedding.
	Vector []float32
}

// MemoryIndexStats counts what a sync changed.
type MemoryIndexStats struct {
	Read    int // memory indexes read (their stamp changed)
	Files   int // files whose chunks were replaced
	Chunks  int // chunks added
	Removed int // chunks removed
	Vectors int // OpenClaw's vectors reused
	// Failed lists the memory indexes that could not be read: their
	// chunks are kept as they were.
	Failed []MemoryIndexFailure
}

// MemoryIndexFailure is a memory index a sync could not read, and why.
type MemoryIndexFailure struct {
	StateDir, Rel string
	Err           error
}

// Changed reports whether the sync changed the search index.
func (s MemoryIndexStats) Changed() bool { return s.Files > 0 || s.Removed > 0 }

// SyncMemoryIndexes makes the search index's memory-index chunks those of
// found: a memory index whose stamp changed is read again, a file whose
// chunks changed has them replaced, a file or an index no longer found
// loses them. Each index changes in one transaction. A store without
// memory-index chunks is left alone.
func SyncMemoryIndexes(ctx context.Context, st clawledger.SearchIndex, found []FoundMemoryIndex) (MemoryIndexStats, error) {
	var stats MemoryIndexStats
	ms, ok := st.(clawledger.MemoryIndexStore)
	if !ok {
		return stats, nil
	}
	stored, err := ms.MemoryIndexes(ctx)
	if err != nil {
		return stats, err
	}
	held := map[[2]string]*clawledger.MemoryIndex{}
	for i := range stored {
		held[[2]string{stored[i].StateDir, stored[i].Rel}] = &stored[i]
	}
	for _, f := range found {
		key := [2]string{f.StateDir, f.Rel}
		old := held[key]
		delete(held, key)
		if old != nil && old.Stamp == f.Stamp {
			continue
		}
		docs, err := f.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return stats, ctx.Err()
			}
			stats.Failed = append(stats.Failed, MemoryIndexFailure{StateDir: f.StateDir, Rel: f.Rel, Err: err})
			continue
		}
		stats.Read++
		m := &clawledger.MemoryIndex{StateDir: f.StateDir, Rel: f.Rel, Stamp: f.Stamp}
		if old != nil {
			m.ID, m.Files = old.ID, old.Files
		}
		if err := syncMemoryIndex(ctx, st, m, docs, f.Origins, false, &stats); err != nil {
			return stats, fmt.Errorf("memory index %s: %w", f.Rel, err)
		}
	}
	for _, m := range held { // no longer found
		if err := syncMemoryIndex(ctx, st, m, nil, nil, true, &stats); err != nil {
			return stats, err
		}
	}
	return stats, nil
}

// syncMemoryIndex replaces m's files by docs and its entry origins by
// origins (with forget, forgets m), in one transaction, then stores the
// vectors OpenClaw's index lends.
func syncMemoryIndex(ctx context.Context, st clawledger.SearchIndex, m *clawledger.MemoryIndex, docs []MemoryIndexDoc,
	origins []clawledger.MemoryEntryOrigin, forget bool, stats *MemoryIndexStats) error {
	tx, err := st.BeginIndex(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	mt, ok := tx.(clawledger.MemoryIndexTx)
	if !ok {
		return fmt.Errorf("the search index keeps no memory-index chunks")
	}
	drop := func(f *clawledger.MemoryIndexFile) error {
		n, err := tx.DeleteChunks(ctx, f.ChunkSource())
		stats.Removed += n
		if err != nil {
			return err
		}
		return mt.DeleteMemoryIndexFile(ctx, f.ID)
	}
	if forget {
		for i := range m.Files {
			if err := drop(&m.Files[i]); err != nil {
				return err
			}
		}
		if err := mt.DeleteMemoryIndex(ctx, m.ID); err != nil {
			return err
		}
		return tx.Commit()
	}
	if err := mt.PutMemoryIndex(ctx, m); err != nil {
		return err
	}
	if err := mt.PutMemoryEntryOrigins(ctx, m.ID, origins); err != nil {
		return err
	}
	old := map[[2]string]*clawledger.MemoryIndexFile{}
	for i := range m.Files {
		old[[2]string{m.Files[i].Path, m.Files[i].Source}] = &m.Files[i]
	}
	var ids []int64
	var vecs [][]float32
	for i := range docs {
		d := &docs[i]
		d.File.Digest = chunksDigest(d.Chunks)
		key := [2]string{d.File.Path, d.File.Source}
		prev := old[key]
		delete(old, key)
		if prev != nil && prev.Digest == d.File.Digest && prev.AgentID == d.File.AgentID {
			continue
		}
		if prev != nil {
			d.File.ID = prev.ID
			n, err := tx.DeleteChunks(ctx, prev.ChunkSource())
			stats.Removed += n
			if err != nil {
				return err
			}
		}
		if err := mt.PutMemoryIndexFile(ctx, m.ID, &d.File); err != nil {
			return err
		}
		stats.Files++
		for j, c := range MemoryIndexChunks(d) {
			if err := tx.AddChunk(ctx, &c, TokenCount(c.Text)); err != nil {
				return err
			}
			stats.Chunks++
			if v := d.Chunks[j].Vector; v != nil && hex.EncodeToString(c.Hash) == d.Chunks[j].Hash {
				ids, vecs = append(ids, c.ID), append(vecs, v)
			}
		}
	}
	for _, f := range old {
		if err := drop(f); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if len(ids) > 0 {
		if err := st.PutVectors(ctx, ids, vecs); err != nil {
			return err
		}
		stats.Vectors += len(ids)
	}
	return nil
}

// MemoryIndexChunks is a memory-index file's chunks as the search index
// holds them: one per chunk of OpenClaw's, secrets masked line for line,
// filed under the date in the file's name, else its modification time.
func MemoryIndexChunks(d *MemoryIndexDoc) []clawledger.Chunk {
	out := make([]clawledger.Chunk, len(d.Chunks))
	for i, c := range d.Chunks {
		text := redact.SecretsKeepLines(c.Text)
		sum := sha256.Sum256([]byte(text))
		out[i] = clawledger.Chunk{Kind: KindMemoryIndex, SourceID: d.File.ChunkSource(), AgentID: d.File.AgentID, Role: KindMemoryIndex,
			TsMs: MemoryTime(d.File.Path, d.MtimeMs), StartLine: c.StartLine, EndLine: c.EndLine, Part: i, Hash: sum[:], Text: text}
	}
	return out
}

// chunksDigest identifies a file's chunks: their lines, text and whether
// OpenClaw lends their vectors.
func chunksDigest(chunks []MemoryIndexChunk) string {
	h := sha256.New()
	for _, c := range chunks {
		fmt.Fprintf(h, "%d:%d:%d:%t:", c.StartLine, c.EndLine, len(c.Text), c.Vector != nil)
		h.Write([]byte(c.Text))
	}
	return hex.EncodeToString(h.Sum(nil))
}
