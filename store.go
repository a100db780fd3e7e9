package clawledger

import (
	"context"
	"time"
)

// Source is one tracked file (or, in the SQLite era, one database session)
// with the cursor that makes its ingest incremental and exactly-once.
type Source struct {
	ID         int64
	StateDirID int64
	StateDir   string // absolute path of the state dir
	Rel        string // slash path relative to the state dir
	Kind       SourceKind
	Class      FileClass
	AgentID    string
	SessionID  string // from the file name
	Topic      string
	Cursor     Cursor
	GoneAt     int64 // epoch ms the file was last seen missing; 0 while present
}

// Cursor remembers how far a source has been ingested and how to recognize
// the same file next time. A transcript held in an OpenClaw database uses
// it with its events as lines: Offset is the last seq stored, Size the
// events seen, HeadHash and TailHash hash the first and last event stored,
// PrefixHash runs over every event stored plus its newline (the bytes an
// export writes), Dev, Inode and MtimeNs stay zero.
type Cursor struct {
	Dev, Inode uint64
	Size       int64  // bytes seen at the last read (committed lines plus pending tail)
	MtimeNs    int64  // modification time at the last read
	HeadHash   []byte // sha256 of the first min(1 KiB, Offset) bytes
	TailHash   []byte // sha256 of the up to 1 KiB before Offset
	PrefixHash []byte // serialized sha256 state over bytes [0, Offset)
	Offset     int64  // end of the last complete line stored
	Lines      int64  // complete lines stored (blank and malformed included)
	Malformed  int64  // malformed lines among them
	Pending    int64  // bytes after Offset still waiting for their newline
	// Mark is kept for sources held in an OpenClaw database only: a
	// transcript's rewrite generation (a new one means OpenClaw rewrote it),
	// or what a run log holds: its newest run as "<ts>/<id>", then ";" and
	// the receipts of its runs that the database still holds.
	Mark string
}

// LineStatus says how a stored line decoded.
type LineStatus int

const (
	LineOK        LineStatus = 0
	LineMalformed LineStatus = 1
	LineBlank     LineStatus = 2
	LineRepaired  LineStatus = 3 // decoded though not valid JSON: invalid UTF-8 (replaced by U+FFFD), raw control characters in a string (JSON.parse rejects the line: OpenClaw skips it)
)

// Line is the exact bytes of one complete source line: the record of truth.
type Line struct {
	Offset int64  // byte offset of its first byte
	No     int64  // 1-based line number
	Raw    []byte // without the terminating '\n' (a '\r' before it is kept)
	Status LineStatus
	Error  string // why it is malformed (or how it was repaired)
}

// Record is one line together with what was derived from it.
type Record struct {
	Line     Line
	Entry    *Entry   // transcript entry, nil when malformed or blank
	EntryID  string   // the entry's id, or a stable synthetic one (v1 files)
	ParentID string   // resolved parent (v1 files: the previous entry)
	Model    string   // model of an assistant message: its own, else the latest model change
	Provider string   //
	UsageKey int64    // identifies an assistant message's usage across copies of it (never 0)
	CronRun  *CronRun // cron run log line
	// a tool result's verdict by the error rule (transcript.Failure): the
	// ledger's notion of a failed tool result, and the failure's text
	ToolFailed bool
	ToolError  string
}

// Session is one transcript: the facts derived from its entries merged with
// what the session index says about it.
type Session struct {
	SourceID  int64
	StateDir  string
	Path      string // relative to the state dir
	Kind      SourceKind
	AgentID   string
	SessionID string
	Key       string // session key from the index, when the index names it
	Class     FileClass
	Topic     string
	Gone      bool   // the file no longer exists; its lines are kept
	Host      string // the host whose source it is, in a ledger of many hosts (Fleet); "" otherwise

	Version       string
	Cwd           string
	ParentSession string
	Name          string // session_info name
	StartedAt     int64  // header timestamp
	FirstAt       int64
	LastAt        int64
	FirstUserText string

	Entries           int64
	Messages          int64
	UserMessages      int64
	AssistantMessages int64
	ToolCalls         int64
	ToolResults       int64
	ToolErrors        int64
	Compactions       int64
	Malformed         int64
	Lines             int64

	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	Cost             float64
	Models           []string

	// state carried across incremental batches
	LastEntryID   string
	LeafID        string
	Provider      string
	Model         string
	API           string
	ThinkingLevel string

	Index *IndexEntry // nil for orphans: sessions the index does not name
}

// Orphan reports whether the session index does not name this session.
func (s *Session) Orphan() bool { return s.Index == nil }

// Store is one open ledger: every side of it that a backend implements
// (and the conformance suite, storetest, checks). A store opened read-only
// answers the readers' methods only.
type Store interface {
	Reader
	Writer
	SearchIndex
	CaptureStore
	Maintenance
	Locker
	// Close closes the ledger; a writer's open batch is rolled back.
	Close() error
}

// Locker is a writer's hold on the ledger: one writer at a time (a
// backend without a global writer lock makes these no-ops). A writer holds
// the lock from Open to Close; a watch releases it between batches.
type Locker interface {
	// Unlock releases the writer lock, so another process may write; a
	// write batch still open is rolled back first.
	Unlock() error
	// Lock takes the writer lock again, waiting up to wait for another
	// writer to finish (a *LockedError when it does not).
	Lock(ctx context.Context, wait time.Duration) error
}

// IngestTx writes one source's new lines, its derived rows, its session
// summary and its cursor in one transaction, so a crash never loses or
// duplicates a line: the lines are stored with the cursor that covers them
// or not at all.
type IngestTx interface {
	Add(rec *Record) error
	// Commit stores the cursor (ending at the last line added) and the
	// session summary with the lines.
	Commit(cur Cursor, sess *Session) error
	// Rollback undoes the source's writes since Begin: its own alone when it
	// was begun with Replace or Atomic, else every write since the last
	// Flush (a writer that stops early and wants to keep what it stored
	// commits a cursor ending at its last line instead).
	Rollback() error
}

// WriteMode says how Begin writes a source.
type WriteMode int

const (
	// Append adds lines after the stored ones, at the cost of no more than
	// the rows written.
	Append WriteMode = iota
	// Atomic adds lines after the stored ones so that Rollback undoes them
	// alone (a savepoint: every page the source writes is copied first).
	Atomic
	// Replace deletes the source's stored lines and derived rows first:
	// the source is re-read in full, and Rollback restores what it held.
	Replace
)

// WorkspaceFile is a workspace markdown file (MEMORY.md, memory/*.md, ...).
type WorkspaceFile struct {
	StateDirID int64
	StateDir   string
	AgentID    string
	Rel        string
	Size       int64
	MtimeNs    int64
	SHA256     string
	Content    []byte
}

// WorkspaceVersion is one content a workspace file was seen with.
type WorkspaceVersion struct {
	SourceID int64
	SHA256   string
	Size     int64
	MtimeNs  int64 // the file's mtime when this content was first seen
	SeenAt   int64 // epoch ms it was first stored
	Current  bool  // the file's content as of its last read
}

// SourcesEnsurer is a Writer that registers many sources at once: what
// EnsureSource does for each, in order (new sources get ids in the order
// given), in fewer statements. A first ingest registers thousands.
type SourcesEnsurer interface {
	EnsureSources(ctx context.Context, srcs []*Source) ([]*Source, error)
}

// Writer is the ingest side of a ledger store. One writer at a time.
type Writer interface {
	// StateDir returns the id of a state dir, registering it when new, and
	// the digest of its files Scanned recorded (nil once any source of the
	// dir changed since).
	StateDir(ctx context.Context, path string) (id int64, digest []byte, err error)
	// Scanned records that the ledger is up to date with a state dir, with
	// the digest of its files (nil when some source does not match them).
	Scanned(ctx context.Context, stateDirID int64, digest []byte) error
	Sources(ctx context.Context, stateDirID int64) ([]*Source, error)
	// EnsureSource inserts the source when new and returns it with its id.
	EnsureSource(ctx context.Context, src *Source) (*Source, error)
	// UpdateSource stores a source's path, class, cursor and gone mark
	// without touching its lines (renames, stat-only changes, vanished files).
	UpdateSource(ctx context.Context, src *Source) error
	// Begin starts writing a source (see WriteMode). The returned session
	// is the stored summary to continue from (empty when replacing).
	Begin(ctx context.Context, src *Source, mode WriteMode) (IngestTx, *Session, error)
	// ReplaceIndex, ReplaceCronJobs and PutWorkspaceFile replace what a
	// file says and store its source (cursor, gone mark) with it.
	ReplaceIndex(ctx context.Context, src *Source, entries []IndexEntry) error
	ReplaceCronJobs(ctx context.Context, stateDirID int64, jobs []CronJob, srcs []*Source) error
	PutWorkspaceFile(ctx context.Context, src *Source, f *WorkspaceFile) error
	// SetAgents records the agents found in a state dir.
	SetAgents(ctx context.Context, stateDirID int64, agents []string) error
	// MarkSample marks a state dir as the bundled sample (StateDirInfo.Sample).
	MarkSample(ctx context.Context, stateDirID int64) error
	// Failures lists the files of a state dir read whole that could not be
	// used as they were, by fingerprint; SetFailure records one (nil: the
	// source's file is usable again).
	Failures(ctx context.Context, stateDirID int64) ([]FileFailure, error)
	SetFailure(ctx context.Context, sourceID int64, f *FileFailure) error
	// Flush makes everything written so far durable. Writes are batched
	// into one transaction until then; a failed write rolls the whole batch
	// back (never half of a source: its lines, derived rows and cursor go
	// together).
	Flush(ctx context.Context) error
	// EndImport ends the import an Open began (OpenOptions.Import): what
	// was written is made durable, and readers no longer wait for the
	// writer. The derived layers, which read while they write, come after
	// it. Without an import it does nothing.
	EndImport(ctx context.Context) error
}

// SessionFilter selects sessions.
type SessionFilter struct {
	Agent          string
	StateDirs      []string // only these state dirs (their paths); nil: all
	Channel        string
	Since, Until   int64 // epoch ms: active since (last activity), started before (first activity); 0 = open
	IncludeDeleted bool  // include deleted and reset archives and vanished files
	SessionID      string
	Limit          int
}

// Status summarizes what a ledger holds.
type Status struct {
	StateDirs     []StateDirStatus
	Sources       int64
	Lines         int64
	Malformed     []MalformedLine
	MalformedMore int64
	Repaired      []MalformedLine // lines decoded only after a repair (LineRepaired), Error saying how
	RepairedMore  int64
	Pending       []PendingTail
	Gone          int64
}

// StateDirStatus is what one state dir contributed.
type StateDirStatus struct {
	Path           string
	Agents         []string
	Transcripts    int64
	CronRunLogs    int64
	CronJobs       int64
	WorkspaceFiles int64
	Sessions       int64
	Lines          int64
	Bytes          int64
	LastScan       int64
	Sources        int64  // every source, vanished ones included
	Gone           int64  // vanished ones
	Sample         bool   // the bundled sample (see StateDirInfo)
	Host           string // the host whose state dir it is, in a ledger of many hosts (Fleet); "" otherwise
}

// StateDirInfo is a state dir the ledger holds.
type StateDirInfo struct {
	ID       int64
	Path     string
	LastScan int64 // epoch ms of its last ingest or refresh
	// Sample: the bundled sample state dir an ingest read because no state
	// dir existed; dropped once a real one is found.
	Sample bool
	Agents []string // the agents found in it
}

// Forgotten counts what forgetting a state dir deleted.
type Forgotten struct {
	Sources        int64
	Lines          int64
	Sessions       int64
	WorkspaceFiles int64
	CronJobs       int64
	Chunks         int64 // search index chunks
	Events         int64 // episodic events captured from its lines
	Episodes       int64 // cortex episodes
	AuditRows      int64 // audit trail rows (config history, OpenClaw's audit tables, inventories)
}

// MalformedLine locates one malformed (or repaired) line.
type MalformedLine struct {
	StateDir string
	Path     string
	Line     int64
	Error    string
}

// PendingTail is an unterminated last line held back until its newline arrives.
type PendingTail struct {
	StateDir string
	Path     string
	Bytes    int64
}

// EntryView is one transcript entry as read back from the ledger.
type EntryView struct {
	Line     Line
	EntryID  string
	ParentID string
	Type     string
	Ts       int64
	OnBranch bool // on the path the default view shows (first entry to current leaf, see transcript.Branches)
}

// BranchSummary says how the default view of a transcript, one path from
// its first entry to its current leaf, differs from the whole file: what it
// leaves out (the entries of other branches, each leaving the path at a
// fork) and how many entries it placed by their position in the file.
type BranchSummary struct {
	Omitted  int    // entries left out: they lie on other branches
	Branches int    // those branches
	Forks    []Fork // where they leave the shown path, in file order
	// Relinked counts the entries placed after the entry before them in the
	// file because their own link says nothing usable: written without a
	// parentId (OpenClaw's gateway appended them outside pi's session
	// manager), or naming an entry the transcript does not hold.
	Relinked int
}

// Fork is where branches left out of a transcript's default view leave the
// path it shows.
type Fork struct {
	At       string // the entry on the shown path they branch from; "" before its first entry
	Line     int64  // that entry's line (0 before the first entry)
	Branches int
	Entries  int
}

// Reader is the query side of a ledger store. Readers never wait for a
// writer and never block one.
type Reader interface {
	// Status summarizes the ledger: per state dir counts, up to
	// malformedLimit malformed lines (negative: all) and every pending tail.
	Status(ctx context.Context, malformedLimit int) (*Status, error)
	// Sessions lists transcripts, newest activity first; every filter
	// applies before the limit. A file-era transcript migrated into an
	// agent database whose copy the ledger holds is listed once.
	Sessions(ctx context.Context, f SessionFilter) ([]*Session, error)
	// FindSessions returns the transcripts a reference names: those whose
	// session id or path is the reference (live ones first, vanished ones
	// last), else those whose session id starts with it or whose path ends
	// with "/" + it.
	FindSessions(ctx context.Context, ref string) ([]*Session, error)
	// UserTexts returns up to n non-empty user message texts of each
	// transcript, in file order, by source id: its first n, or with last
	// its last n.
	UserTexts(ctx context.Context, sourceIDs []int64, n int, last bool) (map[int64][]string, error)
	// Entries streams a transcript's lines in file order, each with its
	// entry's fields and whether it lies on the path the default view shows
	// (first entry to current leaf, see transcript.Branches).
	Entries(ctx context.Context, sourceID int64, fn func(*EntryView) error) error
	// TurnStarts returns the offsets of the user messages that open a
	// transcript's turns, in file order: those on the active branch, or
	// with allBranches all of them.
	TurnStarts(ctx context.Context, sourceID int64, allBranches bool) ([]int64, error)
	// Branches says what the default view of a transcript leaves out.
	Branches(ctx context.Context, sourceID int64) (*BranchSummary, error)
	// HasEntry reports whether a transcript holds the entry with this id
	// (or, with an empty id, the line with this number).
	HasEntry(ctx context.Context, sourceID int64, entryID string, lineNo int64) (bool, error)
	// Usage sums the usage of the assistant messages f selects, each
	// message once however many transcripts hold a copy of it.
	Usage(ctx context.Context, f UsageFilter) ([]UsageGroup, error)
	// CronUsage sums what the finished cron runs f selects report.
	CronUsage(ctx context.Context, f UsageFilter) (*CronUsage, error)
	// ToolStats reports every tool f selects, most called first; each
	// call and result counted once across archives and forks.
	ToolStats(ctx context.Context, f ToolFilter) ([]*ToolStat, error)
	// ToolFailures lists the failed tool results f selects, newest first,
	// each once however many transcripts hold a copy of it.
	ToolFailures(ctx context.Context, f ToolFilter) ([]*ToolFailure, error)
	// ExportSources lists the line-based sources (transcripts, run logs),
	// by state dir and path; vanished ones with includeGone.
	ExportSources(ctx context.Context, includeGone bool) ([]*Source, error)
	// Lines streams a source's stored lines in file order.
	Lines(ctx context.Context, sourceID int64, fn func(*Line) error) error
	// StateDirList lists the state dirs the ledger holds, by path.
	StateDirList(ctx context.Context) ([]StateDirInfo, error)
	// CronJobStats lists the cron jobs f selects, by state dir and name, with
	// what their stored runs say; a job known only from its runs is listed
	// too (Defined false).
	CronJobStats(ctx context.Context, f CronFilter) ([]*CronJobStat, error)
	// CronRuns lists the finished runs f selects, newest first.
	CronRuns(ctx context.Context, f CronFilter) ([]*CronRunRecord, error)
	// WorkspaceFiles lists the workspace files f selects, by state dir and path.
	WorkspaceFiles(ctx context.Context, f WorkspaceFilter) ([]*WorkspaceEntry, error)
	WorkspaceHistory
	EventStore
	SearchReader
}

// Maintenance is what doctor checks and mends.
type Maintenance interface {
	// SchemaVersion is the ledger's schema version; SupportedSchemaVersion
	// the newest this build knows.
	SchemaVersion(ctx context.Context) (int64, error)
	SupportedSchemaVersion() int64
	// Integrity checks the store's files (quick: a faster, shallower
	// check) and returns its findings: ["ok"] for a sound ledger.
	Integrity(ctx context.Context, quick bool) ([]string, error)
	// Orphans counts the derived rows whose parent row is missing, per
	// table and reason (only those with any); DeleteOrphans deletes them
	// all in one transaction.
	Orphans(ctx context.Context) ([]OrphanRows, error)
	DeleteOrphans(ctx context.Context) (int64, error)
	// StoredCounts counts, for every line-based source, vanished ones
	// included, the lines stored for it, from one snapshot.
	StoredCounts(ctx context.Context) ([]StoredCounts, error)
	// SourceLines streams a source's stored lines and returns the source,
	// both from one snapshot.
	SourceLines(ctx context.Context, sourceID int64, fn func(*Line) error) (*Source, error)
	// AllSources lists every source of every state dir, gone ones included.
	AllSources(ctx context.Context) ([]*Source, error)
	// ResetSource deletes a source's lines and derived rows and zeroes its
	// cursor, in one transaction, so the next ingest reads it afresh.
	ResetSource(ctx context.Context, src *Source) error
	// ForgetStateDir deletes a state dir and everything derived from it,
	// in one transaction: its sources with their lines and derived rows,
	// its cron jobs and workspace files, their search index chunks and
	// vectors, the episodic events captured from its lines (unless another
	// state dir holds the same transcript), its cortex episodes, and its
	// audit trail. Events appended by hand stay.
	ForgetStateDir(ctx context.Context, stateDirID int64) (*Forgotten, error)
}

// OrphanRows counts derived rows whose parent row is missing.
type OrphanRows struct {
	Table  string // where they are (a backend's name for it)
	Reason string // "its source is missing", ...
	Rows   int64
}

// StoredCounts is what the ledger holds for one line-based source, to
// compare with its cursor.
type StoredCounts struct {
	Source    *Source
	Lines     int64 // stored lines
	MaxLineNo int64
	Malformed int64
	Bytes     int64 // every stored line's bytes and its newline
	NoBytes   int64 // malformed lines stored without their bytes (over the line limit, undecodable events)
}

// WorkspaceHistory reads the versions of workspace files (memory edits).
type WorkspaceHistory interface {
	// WorkspaceVersions lists every content a workspace file was seen
	// with, newest first.
	WorkspaceVersions(ctx context.Context, sourceID int64) ([]WorkspaceVersion, error)
	// WorkspaceVersion reads one of them by its sha256 (ErrNotFound when
	// the file never held it).
	WorkspaceVersion(ctx context.Context, sourceID int64, sha256 string) (*WorkspaceFile, error)
}
