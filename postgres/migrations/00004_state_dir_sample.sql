-- +goose Up
-- The bundled sample state dir an ingest reads when no OpenClaw state dir
-- exists is marked, so that it is dropped (as forgetting a state dir drops
-- it) once a real one is found, and never counted with real data.
ALTER TABLE state_dirs ADD COLUMN sample boolean NOT NULL DEFAULT false;

-- Every workspace file is indexed for search now, not only the memory
-- files (SOUL.md, AGENTS.md, ... as kind 'workspace'): the next update of
-- each host's index chunks them all again.
DELETE FROM search_sources WHERE source_id IN (SELECT id FROM sources WHERE kind = 'workspace');
DELETE FROM search_current;

-- +goose Down
ALTER TABLE state_dirs DROP COLUMN sample;
