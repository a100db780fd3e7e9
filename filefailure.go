package clawledger

// FileFailure is a file read whole (a session index, cron/jobs.json or its
// state sidecar, a workspace file) that could not be used as it was: it did
// not parse, nested deeper than the parser's bound, or was over its size
// cap. The collector remembers it by the file's fingerprint (device, inode,
// size, mtime), does not read it again until the file changes, and reports
// Message on every run meanwhile.
type FileFailure struct {
	SourceID   int64
	Rel        string // slash path relative to the state dir (read back only)
	Dev, Inode uint64
	Size       int64
	MtimeNs    int64
	Message    string
}
