-- Least-privilege roles for a clawledger ledger on PostgreSQL (see
-- docs/postgres.md). Run once, as a role that may create roles and
-- schemas (a superuser, or one with CREATEROLE and CREATE on the database),
-- in the ledger's database:
--
--   psql -v writer=clawledger_writer -v reader=clawledger_reader \
--        -v schema=clawledger -d ledger -f roles.sql
--
-- The writer owns the ledger's schema: it creates and upgrades the tables
-- (the first ingest does) and writes them (ingest, watch, migrate,
-- episodes, reindex, embed). The reader may read the ledger (serve, mcp,
-- the reports) but never its episodic events (grants.sql, after the
-- writer's first run). Give each a password (\password) or a certificate.

CREATE ROLE :"writer" LOGIN;
CREATE ROLE :"reader" LOGIN;
CREATE SCHEMA :"schema" AUTHORIZATION :"writer";
GRANT USAGE ON SCHEMA :"schema" TO :"reader";
-- both find the ledger's tables without naming the schema
ALTER ROLE :"writer" SET search_path = :"schema";
ALTER ROLE :"reader" SET search_path = :"schema";
-- tables a later clawledger adds are readable too (grants.sql keeps the
-- episodic ones out)
ALTER DEFAULT PRIVILEGES FOR ROLE :"writer" IN SCHEMA :"schema" GRANT SELECT ON TABLES TO :"reader";
