package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/indexdigest"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/sqlite"
)

// cancelling cancels the ingest at the first lines it stores.
type cancelling struct {
	NopObserver
	cancel context.CancelFunc
}

func (c cancelling) Progress(task string) Progress {
	if task == TaskIngest {
		return cancelBar{c.cancel}
	}
	return nil
}

type cancelBar struct{ cancel context.CancelFunc }

func (cancelBar) Start(int64) {}
func (b cancelBar) Add(int64) { b.cancel() }
func (cancelBar) Finish()     {}

// TestIngestCancelledMidImport: a first ingest cancelled while it imports,
// its index fed meanwhile, leaves the ledger's index empty and no build
// file; so does one killed (its build's file left: the next build
// replaces it). The next ingest completes the index: the one a reindex
// builds, word for word.
func TestIngestCancelledMidImport(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, ".openclaw")
	if _, err := fixture.WriteCortex(state, fixture.CortexOptions{Sessions: 10, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cancelled.db")
	cancelled, ref := service(t, path), service(t, filepath.Join(dir, "ref.db"))
	for _, s := range []*Service{cancelled, ref} {
		s.StateDirs = func() ([]string, error) { return []string{state}, nil }
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancelled.Observer = cancelling{cancel: cancel}
	if _, err := cancelled.Ingest(ctx, IngestRequest{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled ingest: %v", err)
	}
	cancelled.Close()
	if _, err := os.Stat(path + sqlite.ApartSuffix); !os.IsNotExist(err) {
		t.Fatalf("the build's file is left: %v", err)
	}
	var lines, chunks int64
	if err := queryNumbers(path, `SELECT (SELECT count(*) FROM lines), (SELECT count(*) FROM search_chunks)`, &lines, &chunks); err != nil || lines == 0 || chunks != 0 {
		t.Fatalf("after the cancelled ingest: %d lines, %d chunks (%v)", lines, chunks, err)
	}
	// a killed build's file
	if err := os.WriteFile(path+sqlite.ApartSuffix, []byte("a killed build's pages"), 0o600); err != nil {
		t.Fatal(err)
	}

	cancelled.Observer = nil
	if _, err := cancelled.Ingest(context.Background(), IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + sqlite.ApartSuffix); !os.IsNotExist(err) {
		t.Fatalf("the build's file is left: %v", err)
	}
	if _, err := ref.Ingest(context.Background(), IngestRequest{NoIndex: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Reindex(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got [2]bytes.Buffer
	for i, p := range []string{ref.Location.Path, path} {
		if counts, err := indexdigest.Write(context.Background(), p, &got[i]); err != nil || counts[0] == 0 {
			t.Fatalf("%s: %v rows, %v", p, counts, err)
		}
	}
	if !bytes.Equal(got[0].Bytes(), got[1].Bytes()) {
		t.Fatal("the index completed after a cancelled ingest differs from the reindexed one")
	}
}

// queryNumbers scans one row of numbers from the ledger at path.
func queryNumbers(path, q string, into ...any) error {
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "mode=ro"))
	if err != nil {
		return err
	}
	defer db.Close()
	return db.QueryRow(q).Scan(into...)
}
