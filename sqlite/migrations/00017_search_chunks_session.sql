-- +goose Up
-- No statement reads search_chunks by session (a search filtered by
-- session names its transcripts: search_chunks_source), yet every chunk
-- added went down this index at a random place (session ids are random):
-- a tenth of a first index build's writer.
DROP INDEX search_chunks_session;

-- +goose Down
CREATE INDEX search_chunks_session ON search_chunks(session_id);
