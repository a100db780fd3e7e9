package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
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
// its index and cortex fed meanwhile, leaves the ledger's index and cortex
// empty and no build file; so does one killed (its build's file left: the
// next build replaces it). The next ingest completes the index and derives
// the cortex: the index a reindex builds, word for word, and the cortex a
// rebuild derives, row for row.
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
	var lines, chunks, derived int64
	if err := queryNumbers(path, `SELECT (SELECT count(*) FROM lines), (SELECT count(*) FROM search_chunks), (SELECT count(*) FROM cortex_sources)`,
		&lines, &chunks, &derived); err != nil || lines == 0 || chunks != 0 || derived != 0 {
		t.Fatalf("after the cancelled ingest: %d lines, %d chunks, %d transcripts derived (%v)", lines, chunks, derived, err)
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
	if _, err := ref.CortexRebuild(context.Background(), CortexRebuildRequest{}); err != nil {
		t.Fatal(err)
	}
	sameDigest(t, "the index completed after a cancelled ingest", indexdigest.Write, ref.Location.Path, path)
	sameDigest(t, "the cortex derived after a cancelled ingest", indexdigest.WriteCortex, ref.Location.Path, path)
}

// sameDigest fails unless the ledgers at want and got give the same
// digest (indexdigest's), and one of some rows.
func sameDigest(t *testing.T, what string, write func(context.Context, string, io.Writer) ([]int, error), want, got string) {
	t.Helper()
	var b [2]bytes.Buffer
	for i, p := range []string{want, got} {
		if counts, err := write(context.Background(), p, &b[i]); err != nil || counts[0] == 0 {
			t.Fatalf("%s: %v rows, %v", p, counts, err)
		}
	}
	if !bytes.Equal(b[0].Bytes(), b[1].Bytes()) {
		t.Fatalf("%s differs from the one built from the ledger", what)
	}
}

// TestIngestFeedsCortex: a first ingest derives its cortex from what the
// import fed (no line read back: TestImportBeforeDerived), and it is the
// cortex a rebuild derives from the ledger, row for row, in both storage
// eras; the file the feed kept it in is gone.
func TestIngestFeedsCortex(t *testing.T) {
	for _, era := range fixture.Eras {
		t.Run(era.Name, func(t *testing.T) {
			s, m := cortexService(t, era.SQLite)
			if err := m.Write(nil); err != nil {
				t.Fatal(err)
			}
			ref := service(t, filepath.Join(t.TempDir(), "ref.db"))
			ref.StateDirs = s.StateDirs
			if _, err := s.Ingest(context.Background(), IngestRequest{}); err != nil {
				t.Fatal(err)
			}
			if _, err := ref.Ingest(context.Background(), IngestRequest{NoIndex: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := ref.CortexRebuild(context.Background(), CortexRebuildRequest{}); err != nil {
				t.Fatal(err)
			}
			sameDigest(t, "the cortex of a first ingest", indexdigest.WriteCortex, ref.Location.Path, s.Location.Path)
			if _, err := os.Stat(s.Location.Path + CortexSpillSuffix); !os.IsNotExist(err) {
				t.Fatalf("the fed cortex's file is left: %v", err)
			}
		})
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
