package clawledger

import "context"

// The search index is a derived layer: chunks of the ledger's messages,
// compaction summaries and memory files, with a word index and vectors.
// The search package decides what is indexed and how hits rank; a
// backend stores the chunks, answers word queries its own way (FTS5,
// tsvector) and hands the vectors over for an in-process scan.

// SearchQuery is a parsed query (search.Parse): groups of alternatives that
// must all match (a OR b, AND between groups), and terms that must not. A
// backend renders it in its index's query language.
type SearchQuery struct {
	Groups [][]SearchTerm
	Not    []SearchTerm
}

// SearchTerm is one searchable unit of a query.
type SearchTerm struct {
	Text   string // as typed; CJK text matches any substring of two or more characters
	Phrase bool   // "quoted": the words in this order
	Prefix bool   // word*: the last word matches as a prefix
	Not    bool   // -term
}

// SearchFilter narrows a search. Every filter applies before candidates are
// cut to a limit: in the store for the lexical lane, in the scan for the
// vector lane.
type SearchFilter struct {
	AgentID   string
	SourceIDs []int64 // transcripts of one session; nil means all
	Role      string  // user, assistant, compaction, branch_summary, memory
	Source    string  // "sessions", "memory", or "" for both
	Since     int64   // epoch ms, inclusive; 0 = open
	Until     int64   // epoch ms, exclusive; 0 = open
	// MaxID keeps the chunks with ids up to it (0 = all): a paged search's
	// snapshot, so that chunks an ingest appends between pages stay out.
	MaxID int64
}

// LexicalMatch is a chunk the word index matched, with what BM25 needs:
// its text, or the counts its word index holds (TF).
type LexicalMatch struct {
	ID     int64
	Tokens int // document length
	Text   string
	// TF, when the index counts them, is how often each phrase of the
	// query occurs in the chunk, in the order the query renders them (its
	// positive terms, then the excluded ones); Text is then left empty.
	TF []int
	// Hit, when not nil, is the chunk's hit as Hits would give it, read
	// with the match in its snapshot (a store reads a rare query's few
	// matches so, saving Hits' round trip): the engine does not ask for it.
	Hit *ChunkHit
}

// DocFrequency is how many chunks a query term occurs in.
type DocFrequency struct {
	DF    float64
	Exact bool // false: estimated from how dense its newest matches are
}

// Corpus holds the index totals BM25 needs.
type Corpus struct {
	Chunks float64 // documents in the index
	AvgLen float64 // mean document length in tokens
	MaxID  int64   // the highest chunk id
}

// Chunk is one indexed piece of a document.
type Chunk struct {
	ID        int64
	Kind      string // message, compaction, memory
	SourceID  int64
	LineID    int64
	AgentID   string
	SessionID string
	EntryID   string
	Role      string
	TsMs      int64
	StartLine int64
	EndLine   int64
	Part      int
	Hash      []byte
	Text      string // redacted
}

// ChunkHit is an indexed chunk with where it came from.
type ChunkHit struct {
	Chunk
	StateDir string
	Path     string // transcript or memory file, relative to the state dir
	Class    string // transcript class (live, reset, deleted, ...); "" for memory
	Gone     bool   // the file no longer exists
}

// VectorMeta is what the vector lane filters on, kept beside each vector.
type VectorMeta struct {
	SourceID int64
	TsMs     int64
	AgentID  string
	Role     string
	Kind     string
}

// VectorSink takes the stored vectors as they are read (search.VectorIndex
// holds them in one matrix): each as a little-endian float32 blob, with its
// metadata's strings as bytes the sink copies when it keeps them.
type VectorSink interface {
	Grow(n, dims int)
	AddEncoded(id int64, m VectorMeta, blob, agent, role, kind []byte) error
}

// PendingChunk is a chunk waiting for its vector.
type PendingChunk struct {
	ID   int64
	Text string
}

// SearchDoc is one indexable document as read from the ledger.
type SearchDoc struct {
	Kind      string
	SourceID  int64
	LineID    int64 // ledger line of a message or compaction
	LineNo    int64 // its 1-based line number in the transcript
	AgentID   string
	SessionID string
	EntryID   string
	Role      string // user, assistant, compaction, branch_summary; memory for files
	TsMs      int64
	Path      string // memory: path relative to the state dir
	MtimeMs   int64  // memory: file modification time
	Text      string // as stored in the ledger, unredacted
}

// IndexSource is a source whose search index is behind the ledger.
type IndexSource struct {
	ID        int64
	Kind      SourceKind // transcript or workspace
	Rel       string
	AgentID   string // a transcript's session's
	SessionID string
	Stale     bool  // its lines were replaced: all its chunks are rebuilt
	MaxOffset int64 // offset of the last line indexed; -1 for none
	LineCount int64 // lines the ledger holds now
	Behind    int64 // lines not indexed yet (for progress)
}

// SearchReader is the query side of the search index.
type SearchReader interface {
	// RenderQuery is q in the index's query language, as Lexical runs it
	// (for explaining a search).
	RenderQuery(q *SearchQuery) string
	// Lexical returns the chunks matching q that pass f, newest first, at
	// most window of them (0: all); complete reports that there are no
	// more. Ranking is the caller's.
	Lexical(ctx context.Context, q *SearchQuery, f *SearchFilter, window int) (matches []LexicalMatch, complete bool, err error)
	// TermCounts returns each term's document frequency over the whole
	// index (unfiltered) and the corpus totals. newest[i], when not nil,
	// holds term i's newest matching chunk ids, newest first (all of them,
	// or at least DFProbe of the search package): the store counts from it
	// rather than from the index.
	TermCounts(ctx context.Context, terms []SearchTerm, newest [][]int64) ([]DocFrequency, Corpus, error)
	// Hits returns the chunks with these ids (those that still exist).
	Hits(ctx context.Context, ids []int64) (map[int64]*ChunkHit, error)
	// LoadVectors hands every stored vector to x, in chunk order.
	LoadVectors(ctx context.Context, x VectorSink) error
	// SearchIndexCounts says how many chunks and vectors the index holds.
	SearchIndexCounts(ctx context.Context) (chunks, vectors int64, err error)
	// SearchMeta reads a setting of the search layer ("" when unset): the
	// embedder configuration, and VectorSpace's.
	SearchMeta(ctx context.Context, key string) (string, error)
	// VectorSpace names the embedding space of the stored vectors ("" when none).
	VectorSpace(ctx context.Context) (string, error)
}

// VectorGenerations is a SearchReader that says when its vectors change,
// so that a long-running reader keeps the vector matrix it loaded (the
// ledger service does); a store without it has its vectors loaded for
// every search.
type VectorGenerations interface {
	// VectorGeneration is a number that changes whenever a stored vector
	// is added, changed or deleted.
	VectorGeneration(ctx context.Context) (int64, error)
}

// SearchIndex is the whole search index: queries, the indexer's writes,
// vectors and the embedding cache. Its writes need the writer lock.
type SearchIndex interface {
	SearchReader
	// SearchIndexCurrent reports whether the index holds every change of
	// the ledger (an ingest that stores nothing leaves it current).
	SearchIndexCurrent(ctx context.Context) (bool, error)
	// SearchIndexBacklog is how many ledger lines (plus one per changed
	// memory file) the index has yet to take in.
	SearchIndexBacklog(ctx context.Context) (int64, error)
	IndexWriter
	// ClearSearchIndex empties the index (vectors included; the embedding
	// cache and settings stay), so the next update rebuilds it.
	ClearSearchIndex(ctx context.Context) error
	SetSearchMeta(ctx context.Context, key, value string) error
	// UseVectorSpace makes space the one the stored vectors are of: another
	// space's vectors are deleted (never mixed); "" deletes them all. It
	// returns how many were deleted.
	UseVectorSpace(ctx context.Context, space string) (int64, error)
	// UnembeddedChunks returns up to limit chunks past afterID without a
	// vector, in id order; CountUnembedded counts them all.
	UnembeddedChunks(ctx context.Context, afterID int64, limit int) ([]PendingChunk, error)
	CountUnembedded(ctx context.Context) (int64, error)
	// PutVectors stores chunk vectors (a chunk deleted meanwhile is skipped).
	PutVectors(ctx context.Context, ids []int64, vecs [][]float32) error
	// GetEmbeddings and PutEmbeddings are the embedding cache, keyed by
	// space and content hash; PruneEmbeddingCache evicts the least recently
	// used vectors until the cache holds at most maxBytes of them.
	GetEmbeddings(ctx context.Context, sp EmbeddingSpace, hashes [][]byte) (map[string][]float32, error)
	PutEmbeddings(ctx context.Context, sp EmbeddingSpace, hashes [][]byte, vecs [][]float32) error
	PruneEmbeddingCache(ctx context.Context, maxBytes int64) (int64, error)
}

// IndexWriter is what the indexer writes an index through: its
// transactions, and the ledger's documents it reads beside them.
type IndexWriter interface {
	// BeginIndex starts a write transaction on the index. Searches see the
	// index as of its last commit.
	BeginIndex(ctx context.Context) (IndexTx, error)
	// TranscriptDocs returns up to limit documents of a transcript past a
	// line offset (user and assistant messages with text, and summaries),
	// in file order, each with its line's offset. It reads the committed
	// ledger, outside any index transaction, so the indexer reads (on a
	// goroutine of its own) while it writes.
	TranscriptDocs(ctx context.Context, src *IndexSource, after int64, limit int) ([]SearchDoc, []int64, error)
}

// ApartIndexer is a SearchIndex that can build a whole index apart from
// the ledger's writer: the build writes to storage of its own, so it runs
// while the writer does other work (an ingest's cortex), and one short
// transaction puts it in place. A store whose writers do not wait for
// each other (PostgreSQL) has no need of it.
type ApartIndexer interface {
	// BuildIndexApart begins a build of the whole index apart; nil when
	// the index holds anything (a build apart would not be whole). The
	// build sees the ledger as it is when it begins.
	BuildIndexApart(ctx context.Context) (ApartIndex, error)
}

// ApartIndex is a whole index built apart from the ledger's writer. Its
// transactions are ApartIndexTx.
type ApartIndex interface {
	IndexWriter
	// Install puts the built index in the ledger, in one transaction; the
	// writer may not hold one open meanwhile. It fails, changing nothing,
	// when the ledger's index is no longer empty. The index is not marked
	// current: an update afterwards finds what changed since the build
	// began, and says so.
	Install(ctx context.Context) error
	// Close discards the build's storage (after Install, or instead of it).
	Close() error
}

// ApartIndexTx is a transaction of a build apart.
type ApartIndexTx interface {
	IndexTx
	// DropSources takes every source from sourceID on out of the build:
	// their chunks and progress go, and the next chunk added takes the
	// first of their ids again, as in an update that never saw them (a
	// build fed in source order stays in it: IndexFeed). It returns how
	// many chunks went.
	DropSources(ctx context.Context, sourceID int64) (int, error)
}

// IndexTx is one write transaction on the search index. A source's chunks
// and its progress mark commit together, so an update interrupted between
// transactions resumes where it stopped.
type IndexTx interface {
	// Clear empties the index within the transaction (a rebuild).
	Clear(ctx context.Context) error
	// Behind lists the sources whose index is behind the ledger, in id order.
	Behind(ctx context.Context) ([]IndexSource, error)
	// WorkspaceDoc returns a workspace file as a document, with the digest
	// of its content.
	WorkspaceDoc(ctx context.Context, src *IndexSource) (SearchDoc, string, error)
	// DeleteChunks removes a source's chunks and their vectors.
	DeleteChunks(ctx context.Context, sourceID int64) (int, error)
	// AddChunk stores a chunk (its ID is assigned) with its length in tokens.
	AddChunk(ctx context.Context, c *Chunk, tokens int) error
	// TranscriptIndexed records how far a transcript is indexed: to its
	// line at maxOffset, of lineCount lines (-1 while more are to come).
	TranscriptIndexed(ctx context.Context, sourceID, lineCount, maxOffset int64) error
	// WorkspaceIndexed records the content digest a workspace file is
	// indexed at.
	WorkspaceIndexed(ctx context.Context, sourceID int64, digest string) error
	// MarkCurrent says the index holds every change of the ledger.
	MarkCurrent(ctx context.Context) error
	Commit() error
	Rollback() error
}

// IndexFeeder is an ApartIndexer whose writer can feed a build apart with
// the documents it stores, as it stores them: an import's first index is
// then built beside the import instead of read back after it. PostgreSQL
// does not feed one (its writers do not wait for each other).
type IndexFeeder interface {
	ApartIndexer
	// FeedIndex hands feed, until detach is called, every document the
	// writer stores and what becomes of it (IndexFeed). It attaches
	// nothing (detach is nil) when the ledger holds a line or a workspace
	// file already: the feed would never see those.
	FeedIndex(ctx context.Context, feed IndexFeed) (detach func(), err error)
}

// IndexFeed takes what a ledger's writer stores, as it stores it: in
// order, on the writer's goroutine. A call may wait while the feed
// catches up. What the feed cannot take whole (a source rolled back,
// replaced, anything unusual) it leaves out, for the update after the
// build to read from the ledger.
type IndexFeed interface {
	// Doc is a transcript's document as TranscriptDocs reads it back (a
	// user or assistant message with text, or a summary), its line stored
	// at offset in the open write transaction.
	Doc(d SearchDoc, offset int64)
	// Stored says a transcript's lines so far are stored, lineCount of
	// them, with its session's agent and session id as written: they
	// commit with the write transaction.
	Stored(sourceID, lineCount int64, agentID, sessionID string)
	// Workspace is a workspace file stored, as WorkspaceDoc reads it back,
	// with the digest of its content.
	Workspace(d SearchDoc, digest string)
	// Discard says a source's rows in the open write transaction were
	// deleted (a re-read replaces them) or rolled back.
	Discard(sourceID int64)
	// Abort says the open write transaction was rolled back.
	Abort()
}
