package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

var _ clawledger.WorkspaceHistory = (*DB)(nil)

// WorkspaceVersions lists the contents a workspace file was seen with,
// newest first.
func (db *DB) WorkspaceVersions(ctx context.Context, sourceID int64) ([]clawledger.WorkspaceVersion, error) {
	out, err := queryAll(ctx, db.pool, func(row pgx.Row) (v clawledger.WorkspaceVersion, err error) {
		return v, row.Scan(&v.SourceID, &v.SHA256, &v.Size, &v.MtimeNs, &v.SeenAt, &v.Current)
	}, `SELECT v.source_id, v.sha256, v.size, v.mtime_ns, v.seen_ms, coalesce(w.sha256 = v.sha256, false)
		FROM workspace_versions v LEFT JOIN workspace_files w ON w.source_id = v.source_id
		WHERE v.source_id = $1 ORDER BY v.seen_ms DESC, v.id DESC`, sourceID)
	return out, db.fail(err)
}

// WorkspaceVersion reads one content of a workspace file by its sha256.
func (db *DB) WorkspaceVersion(ctx context.Context, sourceID int64, sha256 string) (*clawledger.WorkspaceFile, error) {
	f := &clawledger.WorkspaceFile{SHA256: sha256}
	err := db.pool.QueryRow(ctx, `SELECT s.state_dir_id, d.path, s.agent_id, s.rel_path, v.size, v.mtime_ns, v.content
		FROM workspace_versions v JOIN sources s ON s.id = v.source_id JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE v.source_id = $1 AND v.sha256 = $2`, sourceID, sha256).
		Scan(&f.StateDirID, &f.StateDir, &f.AgentID, &f.Rel, &f.Size, &f.MtimeNs, &f.Content)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, clawledger.ErrNotFound
	}
	if err != nil {
		return nil, db.fail(err)
	}
	return f, nil
}
