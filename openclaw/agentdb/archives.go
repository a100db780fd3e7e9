package agentdb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/clawledger/clawledger/openclaw/archive"
)

// Archive is a row of session_transcript_archives: the transcript of a
// deleted or reset session, kept in the database and published as the file
// agents/<agentId>/sessions/<Name>. The blob itself is read by Open.
type Archive struct {
	SessionID   string
	Generation  string
	SessionKey  string
	Reason      string // deleted or reset
	Encoding    string // identity or zstd
	SHA256      string // of the blob as stored (compressed when zstd)
	Name        string // file name, e.g. <id>.jsonl.deleted.<ts>.<generation>.zst
	CreatedAt   int64
	PublishedAt int64
	Bytes       int64 // blob size
}

// Archives lists the archive rows (without their blobs), oldest first.
func (d *DB) Archives(ctx context.Context) ([]Archive, error) {
	const t = "session_transcript_archives"
	if !d.Has(t) {
		return nil, nil
	}
	var out []Archive
	err := d.query(ctx, d.db, `SELECT `+d.cols(t, "session_id", "generation", "session_key", "reason", "encoding",
		"archive_sha256", "archive_name", "created_at", "published_at")+`, length(`+d.col(t, "archive_blob")+`)
		FROM `+t+` ORDER BY created_at, session_id, generation`, nil, func(r *sql.Rows) error {
		var s [7]sql.NullString
		var n [3]sql.NullInt64
		if err := r.Scan(&s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &s[6], &n[0], &n[1], &n[2]); err != nil {
			return err
		}
		out = append(out, Archive{SessionID: s[0].String, Generation: s[1].String, SessionKey: s[2].String, Reason: s[3].String,
			Encoding: s[4].String, SHA256: s[5].String, Name: s[6].String, CreatedAt: n[0].Int64, PublishedAt: n[1].Int64, Bytes: n[2].Int64})
		return nil
	})
	return out, err
}

// OpenArchive verifies an archive row's blob against its archive_sha256 and
// returns its transcript, decompressed as it is read.
func (d *DB) OpenArchive(ctx context.Context, a Archive) (io.ReadCloser, error) {
	var blob []byte
	err := d.query(ctx, d.db, `SELECT archive_blob FROM session_transcript_archives WHERE session_id = ? AND generation = ?`,
		[]any{a.SessionID, a.Generation}, func(r *sql.Rows) error { return r.Scan(&blob) })
	if err != nil {
		return nil, err
	}
	if blob == nil {
		return nil, fmt.Errorf("archive %s: row vanished", a.Name)
	}
	if err := verify(blob, a.SHA256); err != nil {
		return nil, fmt.Errorf("archive %s: %w", a.Name, err)
	}
	return decode(bytes.NewReader(blob), a.Encoding, nil)
}

func verify(blob []byte, want string) error {
	sum := sha256.Sum256(blob)
	if got := hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("sha256 %s does not match the recorded %s", got, want)
	}
	return nil
}

func decode(r io.Reader, encoding string, c io.Closer) (io.ReadCloser, error) {
	if encoding == "identity" {
		return readCloser{r, c}, nil
	}
	zr, err := archive.NewReader(r)
	if err != nil {
		return nil, err
	}
	return readCloser{zr, closers{zr, c}}, nil
}

type readCloser struct {
	io.Reader
	c io.Closer
}

func (rc readCloser) Close() error {
	if rc.c == nil {
		return nil
	}
	return rc.c.Close()
}

type closers []io.Closer

func (cs closers) Close() error {
	for _, c := range cs {
		if c != nil {
			c.Close()
		}
	}
	return nil
}

// ColdArchive is a row of session_transcript_cold_archives: a session whose
// events OpenClaw moved out of transcript_events into a zstd archive of
// records, kept in the row (storage "sqlite") or in the file
// agents/<agentId>/sessions/cold/<Name> (storage "file").
type ColdArchive struct {
	SessionID  string
	Generation string
	Name       string
	SHA256     string // of the compressed archive
	Events     int64
	LastSeq    int64
	RawBytes   int64
	Bytes      int64 // compressed size
	ArchivedAt int64
	Storage    string // file or sqlite
}

// ColdArchives lists the cold archive rows (without their blobs).
func (d *DB) ColdArchives(ctx context.Context) ([]ColdArchive, error) {
	const t = "session_transcript_cold_archives"
	if !d.Has(t) {
		return nil, nil
	}
	var out []ColdArchive
	err := d.query(ctx, d.db, `SELECT `+d.cols(t, "session_id", "generation", "archive_name", "archive_sha256", "event_count",
		"last_seq", "raw_bytes", "archive_bytes", "archived_at", "storage")+` FROM `+t+` ORDER BY session_id`, nil,
		func(r *sql.Rows) error {
			var s [5]sql.NullString
			var n [5]sql.NullInt64
			if err := r.Scan(&s[0], &s[1], &s[2], &s[3], &n[0], &n[1], &n[2], &n[3], &n[4], &s[4]); err != nil {
				return err
			}
			out = append(out, ColdArchive{SessionID: s[0].String, Generation: s[1].String, Name: s[2].String, SHA256: s[3].String,
				Events: n[0].Int64, LastSeq: n[1].Int64, RawBytes: n[2].Int64, Bytes: n[3].Int64, ArchivedAt: n[4].Int64, Storage: s[4].String})
			return nil
		})
	return out, err
}

var coldName = regexp.MustCompile(`^[a-f0-9]{64}\.jsonl\.zst$`)

// ColdArchivePath is where OpenClaw keeps a cold archive file of the agent
// database at dbPath (agents/<id>/agent/openclaw-agent.sqlite).
func ColdArchivePath(dbPath, name string) (string, error) {
	if !coldName.MatchString(name) {
		return "", fmt.Errorf("invalid cold archive name %q", name)
	}
	return filepath.Join(filepath.Dir(filepath.Dir(dbPath)), "sessions", "cold", name), nil
}

// ColdEvents verifies a cold archive (its size and sha256) and streams its
// events in archive (seq) order.
func (d *DB) ColdEvents(ctx context.Context, c ColdArchive, fn func(*Event) error) error {
	var blob []byte
	if c.Storage == "sqlite" {
		err := d.query(ctx, d.db, `SELECT archive_blob FROM session_transcript_cold_archives WHERE session_id = ?`,
			[]any{c.SessionID}, func(r *sql.Rows) error { return r.Scan(&blob) })
		if err != nil {
			return err
		}
	} else {
		path, err := ColdArchivePath(d.Path, c.Name)
		if err != nil {
			return err
		}
		// bounded by OpenClaw's own limit on cold archives (64 MiB + 1 MiB)
		if blob, err = d.readBounded(path, 65<<20); err != nil {
			return err
		}
	}
	if int64(len(blob)) != c.Bytes {
		return fmt.Errorf("cold archive %s: %d bytes, the database says %d", c.Name, len(blob), c.Bytes)
	}
	if err := verify(blob, c.SHA256); err != nil {
		return fmt.Errorf("cold archive %s: %w", c.Name, err)
	}
	zr, err := archive.NewReader(bytes.NewReader(blob))
	if err != nil {
		return err
	}
	defer zr.Close()
	h, err := archive.ReadCold(zr, func(ce *archive.ColdEvent) error {
		return fn(&Event{Seq: ce.Seq, CreatedAt: ce.CreatedAt, JSON: []byte(ce.EventJSON)})
	})
	if err != nil {
		return fmt.Errorf("cold archive %s: %w", c.Name, err)
	}
	if h.SessionID != c.SessionID {
		return fmt.Errorf("cold archive %s holds session %s, not %s", c.Name, h.SessionID, c.SessionID)
	}
	return nil
}

func (d *DB) readBounded(path string, max int64) ([]byte, error) {
	open := d.OpenFile
	if open == nil {
		open = func(p string) (io.ReadCloser, error) { return os.Open(p) }
	}
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s is over %d MiB", path, max>>20)
	}
	return b, err
}
