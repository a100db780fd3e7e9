-- +goose Up
-- Every version of a workspace file the ledger has seen, by content hash, so
-- memory edits have a history. workspace_files keeps the latest (what every
-- reader sees); this table keeps each content once per file, the latest
-- included (workspace files are small beside the transcripts, and a version
-- is then read without a join).
CREATE TABLE workspace_versions (
  id        INTEGER PRIMARY KEY,
  source_id INTEGER NOT NULL REFERENCES sources(id),
  sha256    TEXT NOT NULL,
  size      INTEGER NOT NULL,
  mtime_ns  INTEGER NOT NULL, -- the file's mtime when this content was first seen
  seen_ms   INTEGER NOT NULL, -- when it was first stored (for what a ledger held before this table: its mtime)
  content   TEXT NOT NULL,
  UNIQUE (source_id, sha256)
);
INSERT INTO workspace_versions(source_id, sha256, size, mtime_ns, seen_ms, content)
SELECT source_id, sha256, size, mtime_ns, mtime_ns / 1000000, content FROM workspace_files;

-- the lines stored as-is that decoded only after a repair (invalid UTF-8, a
-- raw control character in a string: JSON.parse rejects them, OpenClaw skips
-- them), which status lists as it lists malformed lines
CREATE INDEX lines_repaired ON lines(source_id, line_no) WHERE status = 3;

-- +goose Down
DROP INDEX lines_repaired;
DROP TABLE workspace_versions;
