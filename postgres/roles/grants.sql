-- The reader's grants, once the writer created the ledger's tables (its
-- first run), and again after an upgrade of clawledger: it reads every
-- table of the ledger but the episodic events, what capture keeps, and the
-- audit trail's salts (with one, the short hashes in masks could be
-- tested against guessed secrets).
-- Run as the writer or a superuser:
--
--   psql -v reader=clawledger_reader -v schema=clawledger -d ledger -f grants.sql

GRANT SELECT ON ALL TABLES IN SCHEMA :"schema" TO :"reader";
REVOKE ALL ON :"schema".episodic_events, :"schema".episodic_capture_state, :"schema".episodic_capture_sources,
  :"schema".audit_salt FROM :"reader";
