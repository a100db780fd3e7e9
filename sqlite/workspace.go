package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/clawledger/clawledger"
)

var _ clawledger.WorkspaceHistory = (*DB)(nil)

// WorkspaceVersions lists every content a workspace file was seen with,
// newest first; the one workspace_files holds is the current one.
func (db *DB) WorkspaceVersions(ctx context.Context, sourceID int64) ([]clawledger.WorkspaceVersion, error) {
	return queryAll(ctx, db.r, func(row scanner) (v clawledger.WorkspaceVersion, err error) {
		err = row.Scan(&v.SourceID, &v.SHA256, &v.Size, &v.MtimeNs, &v.SeenAt, &v.Current)
		return v, err
	}, `SELECT v.source_id, v.sha256, v.size, v.mtime_ns, v.seen_ms, coalesce(w.sha256 = v.sha256, 0)
		FROM workspace_versions v LEFT JOIN workspace_files w ON w.source_id = v.source_id
		WHERE v.source_id = ? ORDER BY v.seen_ms DESC, v.id DESC`, sourceID)
}

// WorkspaceVersion reads one content of a workspace file by its sha256.
func (db *DB) WorkspaceVersion(ctx context.Context, sourceID int64, sha256 string) (*clawledger.WorkspaceFile, error) {
	f := &clawledger.WorkspaceFile{SHA256: sha256}
	var content string
	err := db.r.QueryRowContext(ctx, `SELECT s.state_dir_id, d.path, s.agent_id, s.rel_path, v.size, v.mtime_ns, v.content
		FROM workspace_versions v JOIN sources s ON s.id = v.source_id JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE v.source_id = ? AND v.sha256 = ?`, sourceID, sha256).
		Scan(&f.StateDirID, &f.StateDir, &f.AgentID, &f.Rel, &f.Size, &f.MtimeNs, &content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, clawledger.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	f.Content = []byte(content)
	return f, nil
}
