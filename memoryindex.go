package clawledger

import "context"

// OpenClaw's own memory index (the file era's memory/<agentId>.sqlite, the
// SQLite era's memory_index_* tables of each agent database) holds chunks
// of files the ledger may not hold: extraPaths outside the workspace, the
// session transcripts OpenClaw indexed as text. The chunks of those files
// are searchable as memory-index hits (search --source memory_index); the
// chunks of files the ledger holds (the workspace's MEMORY.md, USER.md,
// memory/*.md, its transcripts) are not, so one text is never a hit twice.
// In the search index they are chunks like any other, of kind memory_index,
// whose source is the memory-index file (source id -MemoryIndexFile.ID).

// MemoryIndex is one OpenClaw memory index database as the search index
// holds its chunks.
type MemoryIndex struct {
	ID       int64  // assigned by the store
	StateDir string // absolute path of the state dir
	Rel      string // the database, relative to the state dir
	// Stamp is what the database was read at (its files' sizes and times,
	// what the ledger held then): the same stamp needs no new reading.
	Stamp string
	Files []MemoryIndexFile
}

// MemoryIndexFile is one file of a memory index whose chunks are hits.
type MemoryIndexFile struct {
	ID      int64 // assigned by the store
	AgentID string
	Path    string // as OpenClaw names it: workspace-relative ("../notes/x.md" for an extra path), sessions/<agent>/<file>
	Source  string // OpenClaw's source: memory or sessions
	Digest  string // of its chunks as indexed
}

// ChunkSource is the source id of the file's chunks in the search index:
// negative, so that it is never a ledger source's.
func (f *MemoryIndexFile) ChunkSource() int64 { return -f.ID }

// MemoryIndexStore is a search index that holds memory-index chunks.
type MemoryIndexStore interface {
	// MemoryIndexes lists the memory indexes the search index holds, with
	// their files, by state dir and path.
	MemoryIndexes(ctx context.Context) ([]MemoryIndex, error)
	// MemoryEntryOrigins lists the memory entries that came from the
	// sessions (by session id, in every state dir), by session, agent,
	// time observed and key.
	MemoryEntryOrigins(ctx context.Context, sessionIDs []string) ([]MemoryEntryOrigin, error)
}

// MemoryEntryOrigin links an entry of OpenClaw's memory to a session it
// came from (the SQLite era's memory_entry_origins, in the agent database
// of the memory index). An entry is a short-term recall entry of the
// memory-core plugin (a claim, "memory:claim:<hash>", or
// "memory:<path>:<start>:<end>"), or one promoted into MEMORY.md below a
// marker naming its key; where its text lies comes from the recall store
// of the state database, when it still holds the entry.
type MemoryEntryOrigin struct {
	StateDir     string // the memory index's (set by the store)
	AgentID      string
	SessionID    string
	SessionKey   string
	EntryKey     string
	OriginClass  string // owner, agent, untrusted, system
	ObservedAtMs int64
	// where the entry's text lies in the agent's workspace, and the text
	// (secrets masked); empty when the recall store does not hold it
	Path               string
	StartLine, EndLine int64
	Snippet            string
}

// MemoryIndexTx is an index transaction that keeps memory-index files: a
// file's chunks are added with AddChunk (SourceID ChunkSource()) and
// removed with DeleteChunks.
type MemoryIndexTx interface {
	// PutMemoryIndex records a memory index and its stamp (its ID is
	// assigned when new).
	PutMemoryIndex(ctx context.Context, m *MemoryIndex) error
	// PutMemoryIndexFile records a file of it and its digest (its ID is
	// assigned when new).
	PutMemoryIndexFile(ctx context.Context, indexID int64, f *MemoryIndexFile) error
	// DeleteMemoryIndexFile and DeleteMemoryIndex forget a file or a
	// memory index (its files first).
	DeleteMemoryIndexFile(ctx context.Context, id int64) error
	DeleteMemoryIndex(ctx context.Context, id int64) error
	// PutMemoryEntryOrigins makes origins the memory index's entry origins
	// (those it had are replaced; DeleteMemoryIndex forgets them).
	PutMemoryEntryOrigins(ctx context.Context, indexID int64, origins []MemoryEntryOrigin) error
}
