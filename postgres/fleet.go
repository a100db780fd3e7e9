package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

// Hosts lists the hosts the ledger holds, by name, with what each
// contributed, when its last ingest finished and how long ago that was.
func (db *DB) Hosts(ctx context.Context) ([]clawledger.HostStatus, error) {
	var p params
	out, err := queryAll(ctx, db.pool, func(r pgx.Row) (h clawledger.HostStatus, err error) {
		return h, r.Scan(&h.Name, &h.StateDirs, &h.Sources, &h.Lines, &h.Sessions, &h.LastScan, &h.LagMs)
	}, `SELECT h.name,
		(SELECT count(*) FROM state_dirs d WHERE d.host_id = h.id),
		(SELECT count(*) FROM sources s WHERE s.host_id = h.id),
		(SELECT coalesce(sum(line_count), 0)::bigint FROM sources s WHERE s.host_id = h.id AND s.kind IN ('transcript', 'cron_runs')),
		(SELECT count(*) FROM sessions x JOIN sources s ON s.id = x.source_id WHERE s.host_id = h.id),
		coalesce(l.last, 0),
		CASE WHEN l.last IS NULL THEN 0 ELSE greatest(0, (extract(epoch FROM clock_timestamp()) * 1000)::bigint - l.last) END
		FROM hosts h CROSS JOIN LATERAL (SELECT max(last_scan_ms) AS last FROM state_dirs d WHERE d.host_id = h.id) l
		WHERE true`+db.onHost("h.id", &p)+` ORDER BY h.name COLLATE "C"`, p.args...)
	return out, db.fail(err)
}

// OnHost returns the ledger as one host's: every read sees only that
// host's sources and what derives from them. The view shares this store's
// connections: it needs no closing, and lives as long as the store.
func (db *DB) OnHost(ctx context.Context, name string) (clawledger.Reader, error) {
	var id int64
	err := db.pool.QueryRow(ctx, `SELECT id FROM hosts WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, clawledger.Errorf(clawledger.ENOTFOUND, "the ledger %s holds no host named %q", db.where, name)
	}
	if err != nil {
		return nil, db.fail(err)
	}
	v := *db
	v.only, v.w = id, nil
	return &v, nil
}
