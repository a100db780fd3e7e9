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

// WorkspaceFiles lists the workspace files f selects, by state dir and
// path, each with its current version and how many it had.
func (db *DB) WorkspaceFiles(ctx context.Context, f clawledger.WorkspaceFilter) ([]*clawledger.WorkspaceEntry, error) {
	where, args := inStateDirs("s.state_dir_id", f.StateDirs)
	if where != "" {
		where = " AND " + where
	}
	if f.Agent != "" {
		where += " AND w.agent_id = ?"
		args = append(args, f.Agent)
	}
	return queryAll(ctx, db.r, func(row scanner) (*clawledger.WorkspaceEntry, error) {
		e := &clawledger.WorkspaceEntry{}
		w := &e.File
		var gone int64
		err := row.Scan(&e.SourceID, &w.StateDirID, &w.StateDir, &w.AgentID, &w.Rel, &w.Size, &w.MtimeNs, &w.SHA256, &gone, &e.Versions)
		e.Gone = gone != 0
		return e, err
	}, `SELECT s.id, s.state_dir_id, d.path, w.agent_id, s.rel_path, w.size, w.mtime_ns, w.sha256, s.gone_at_ms,
		(SELECT count(*) FROM workspace_versions v WHERE v.source_id = s.id)
		FROM workspace_files w JOIN sources s ON s.id = w.source_id JOIN state_dirs d ON d.id = s.state_dir_id
		WHERE 1`+where+` ORDER BY d.path, s.rel_path`, args...)
}
