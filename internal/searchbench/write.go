package searchbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/sqlite"
)

// WriteCorpus writes n messages, perSession to a session, into the
// ledger through its Writer (skipping JSONL parsing, which is much faster
// than an ingest), and with raw set the same transcripts as JSONL files
// under raw (the state dir the ledger names). It returns how many
// messages carry each planted term.
func (g *Generator) WriteCorpus(ctx context.Context, db *sqlite.DB, raw string, n, perSession int) (map[string]int, error) {
	stateDir := "/bench/.openclaw"
	if raw != "" {
		var err error
		if stateDir, err = filepath.Abs(raw); err != nil {
			return nil, err
		}
	}
	sdID, err := db.StateDirID(ctx, stateDir)
	if err != nil {
		return nil, err
	}
	for s, written := 0, 0; written < n; s++ {
		sess := g.Session(s, min(perSession, n-written))
		if err := writeSession(ctx, db, sdID, raw, sess); err != nil {
			return nil, err
		}
		written += len(sess.Messages)
		if s%1000 == 999 {
			fmt.Fprintf(os.Stderr, "%d messages\n", written)
		}
	}
	if err := db.SetAgents(ctx, sdID, []string{"main"}); err != nil {
		return nil, err
	}
	return g.counts, db.Flush(ctx)
}

func writeSession(ctx context.Context, db *sqlite.DB, sdID int64, raw string, s *Session) error {
	rel := "agents/main/sessions/" + s.ID + ".jsonl"
	src, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: sdID, Rel: rel, Kind: clawledger.KindTranscript,
		Class: clawledger.ClassLive, AgentID: "main", SessionID: s.ID})
	if err != nil {
		return err
	}
	tx, sess, err := db.Begin(ctx, src, clawledger.Append)
	if err != nil {
		return err
	}
	var file []byte
	var offset int64
	lines := s.Lines()
	for i, l := range lines {
		rec := &clawledger.Record{Line: clawledger.Line{Offset: offset, No: int64(i + 1), Raw: l.Raw}, Entry: l.Entry, EntryID: l.Entry.ID, ParentID: l.Entry.ParentID}
		if err := tx.Add(rec); err != nil {
			tx.Rollback()
			return err
		}
		offset += int64(len(l.Raw) + 1)
		file = append(append(file, l.Raw...), '\n')
	}
	sess.SessionID, sess.AgentID = s.ID, "main"
	sess.StartedAt, sess.FirstAt, sess.LastAt = s.Start, s.Start, s.End
	sess.Entries, sess.Messages, sess.Lines = int64(len(lines)-1), int64(len(s.Messages)), int64(len(lines))
	sess.FirstUserText = s.Messages[0].Text
	if err := tx.Commit(clawledger.Cursor{Size: offset, Offset: offset, Lines: int64(len(lines))}, sess); err != nil {
		return err
	}
	if raw == "" {
		return nil
	}
	path := filepath.Join(raw, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, file, 0o644)
}
