// Command gensearch builds the search benchmark corpus: a ledger holding
// N synthetic messages (written through the store's Writer, skipping JSONL
// parsing, which is much faster than an ingest) and, beside it, the same
// transcripts as JSONL files for comparing with grep-like tools. Words
// follow a Zipf distribution; a few terms are planted at known
// frequencies (see terms). It can also write a static embedding model over
// the corpus vocabulary, for the hybrid benchmark.
//
//	go run ./internal/cmd/gensearch -db /tmp/bench/ledger.db -raw /tmp/bench/raw -messages 1000000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/sqlite"
)

func main() {
	dbPath := flag.String("db", "", "ledger to create (must not exist)")
	raw := flag.String("raw", "", "also write the transcripts as JSONL under this directory")
	n := flag.Int("messages", 1_000_000, "messages to write")
	perSession := flag.Int("per-session", 100, "messages per session")
	model := flag.String("model", "", "also write a static embedding model over the vocabulary here")
	dims := flag.Int("dims", 384, "dimensions of that model")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	if *dbPath == "" {
		log.Fatal("-db is required")
	}
	if _, err := os.Stat(*dbPath); err == nil {
		log.Fatalf("%s exists", *dbPath)
	}
	ctx := context.Background()
	gen := searchbench.NewGenerator(*seed)
	if *model != "" {
		if err := gen.WriteModel(*model, *dims); err != nil {
			log.Fatal(err)
		}
	}
	db, err := sqlite.Open(ctx, *dbPath, sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	stateDir := "/bench/.openclaw"
	if *raw != "" {
		stateDir, _ = filepath.Abs(*raw)
	}
	sdID, err := db.StateDirID(ctx, stateDir)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	written := 0
	for s := 0; written < *n; s++ {
		sess := gen.Session(s, min(*perSession, *n-written))
		if err := writeSession(ctx, db, sdID, stateDir, *raw, sess); err != nil {
			log.Fatal(err)
		}
		written += len(sess.Messages)
		if s%1000 == 999 {
			fmt.Fprintf(os.Stderr, "%d messages, %s\n", written, time.Since(start).Round(time.Second))
		}
	}
	if err := db.SetAgents(ctx, sdID, []string{"main"}); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%d messages written in %s\n", written, time.Since(start).Round(time.Second))
	terms, _ := json.MarshalIndent(gen.Counts(), "", "  ")
	fmt.Println(string(terms))
}

func writeSession(ctx context.Context, db *sqlite.DB, sdID int64, stateDir, raw string, s *searchbench.Session) error {
	rel := "agents/main/sessions/" + s.ID + ".jsonl"
	src, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: sdID, Rel: rel, Kind: clawledger.KindTranscript,
		Class: clawledger.ClassLive, AgentID: "main", SessionID: s.ID})
	if err != nil {
		return err
	}
	tx, sess, err := db.Begin(ctx, src, false)
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
