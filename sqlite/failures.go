package sqlite

import (
	"context"

	"github.com/clawledger/clawledger"
)

// Failures lists the files of a state dir remembered as unusable (see
// clawledger.FileFailure).
func (db *DB) Failures(ctx context.Context, stateDirID int64) ([]clawledger.FileFailure, error) {
	w, err := db.tx(ctx)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, w, func(row scanner) (clawledger.FileFailure, error) {
		var f clawledger.FileFailure
		var dev, ino int64
		err := row.Scan(&f.SourceID, &f.Rel, &dev, &ino, &f.Size, &f.MtimeNs, &f.Message)
		f.Dev, f.Inode = uint64(dev), uint64(ino)
		return f, err
	}, `SELECT f.source_id, s.rel_path, f.dev, f.inode, f.size, f.mtime_ns, f.message
		FROM source_failures f JOIN sources s ON s.id = f.source_id WHERE s.state_dir_id = ? ORDER BY s.rel_path`, stateDirID)
}

// SetFailure remembers that a source's file was unusable as it was; a nil
// failure forgets it.
func (db *DB) SetFailure(ctx context.Context, sourceID int64, f *clawledger.FileFailure) error {
	return db.within(ctx, func(w wtx) error {
		if f == nil {
			_, err := w.exec(`DELETE FROM source_failures WHERE source_id = ?`, sourceID)
			return err
		}
		_, err := w.exec(`INSERT INTO source_failures(source_id, dev, inode, size, mtime_ns, message) VALUES(?, ?, ?, ?, ?, ?)
			ON CONFLICT(source_id) DO UPDATE SET dev = excluded.dev, inode = excluded.inode, size = excluded.size,
			mtime_ns = excluded.mtime_ns, message = excluded.message`,
			sourceID, int64(f.Dev), int64(f.Inode), f.Size, f.MtimeNs, f.Message)
		return err
	})
}
