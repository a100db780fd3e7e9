package view

// Memory is a memory file (MEMORY.md, USER.md, memory/**/*.md of an
// agent's workspace) as the ledger holds it: one copy per state dir that
// has the file at that path.
type Memory struct {
	Files []MemoryFile `json:"files"`
}

// MemoryFile is one memory file's content as of its last read, secrets
// masked line for line (as the search index holds it: a hit's start_line
// and end_line count in this text).
type MemoryFile struct {
	Agent    string  `json:"agent"`
	StateDir string  `json:"state_dir"`
	Path     string  `json:"path"`
	SHA256   string  `json:"sha256"`
	Size     int64   `json:"size"`
	Modified *string `json:"modified"`
	Lines    int     `json:"lines"`
	Text     string  `json:"text"`
}
