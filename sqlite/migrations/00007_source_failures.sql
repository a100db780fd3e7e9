-- +goose Up
-- Files read whole (a session index, cron/jobs.json or its state sidecar, a
-- workspace file) that could not be used as they were (they did not parse,
-- nested too deep, or were over their size cap), by the fingerprint they
-- had: the collector does not read such a file again until it changes, and
-- reports the message on every run meanwhile.
CREATE TABLE source_failures (
  source_id INTEGER PRIMARY KEY,
  dev       INTEGER NOT NULL,
  inode     INTEGER NOT NULL,
  size      INTEGER NOT NULL,
  mtime_ns  INTEGER NOT NULL,
  message   TEXT NOT NULL
);
-- +goose StatementBegin
CREATE TRIGGER source_failures_source_deleted AFTER DELETE ON sources BEGIN
  DELETE FROM source_failures WHERE source_id = old.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER source_failures_source_deleted;
DROP TABLE source_failures;
