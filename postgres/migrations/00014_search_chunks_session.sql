-- +goose Up
-- No statement reads search_chunks by session (a search filtered by
-- session names its transcripts: search_chunks_source), yet every chunk
-- copied in went down this index at a random place (session ids are
-- random). SQLite's migration 00017 drops its twin.
DROP INDEX IF EXISTS search_chunks_session;

-- +goose Down
CREATE INDEX search_chunks_session ON search_chunks(session_id);
