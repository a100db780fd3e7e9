-- +goose Up
-- The bundled sample state dir an ingest reads when no OpenClaw state dir
-- exists is marked, so that it is dropped (as `clawledger forget` drops a
-- state dir) once a real one is found, and never counted with real data.
ALTER TABLE state_dirs ADD COLUMN sample INTEGER NOT NULL DEFAULT 0;

-- Every workspace file is indexed for search now, not only the memory
-- files (SOUL.md, AGENTS.md, ... as kind 'workspace'): the next update of
-- the index chunks them all again.
DELETE FROM search_sources WHERE source_id IN (SELECT id FROM sources WHERE kind = 'workspace');
DELETE FROM search_current;

-- +goose Down
ALTER TABLE state_dirs DROP COLUMN sample;
