package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
)

// walLedger is a ledger holding a few hundred KiB of messages, indexed.
func walLedger(t *testing.T) *ledger {
	l := newLedger(t)
	words := strings.Fields("ledger transcript session agent tool result usage cursor index chunk vector query")
	for i := range 40 {
		var texts []string
		for j := range 30 {
			var b strings.Builder
			for k := range 60 {
				fmt.Fprintf(&b, "%s%d ", words[(i+j+k)%len(words)], (i*31+j*7+k)%97)
			}
			texts = append(texts, b.String())
		}
		l.transcript("main", fixture.Base.Add(time.Duration(i)*time.Hour), texts...)
	}
	l.ingest()
	return l
}

func walSize(t *testing.T, db *sqlite.DB) int64 {
	t.Helper()
	fi, err := os.Stat(db.Path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestWALStaysBounded: the search index's own transactions (rebuilds,
// clears, update batches) and the embedding commits have the WAL copied
// and started over as the ingest's batches do, so however often the index
// is rebuilt, the WAL file stays under its restart bound and one
// transaction (the bounds lowered here, as the test writes little).
func TestWALStaysBounded(t *testing.T) {
	l := walLedger(t)
	ctx := context.Background()
	before := walSize(t, l.db)
	if _, err := search.RebuildIndex(ctx, l.db, nil); err != nil {
		t.Fatal(err)
	}
	rebuild := walSize(t, l.db) - before // the largest transaction below
	const restart, keep = 2 << 20, 256 << 10
	if err := l.db.SetWALBounds(restart, keep); err != nil {
		t.Fatal(err)
	}
	sp := clawledger.EmbeddingSpace{Provider: "test", Model: "m", Key: "k"}
	if _, err := l.db.UseVectorSpace(ctx, "test/m/k"); err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for range 12 {
		if _, err := search.RebuildIndex(ctx, l.db, nil); err != nil {
			t.Fatal(err)
		}
		if err := l.db.ClearSearchIndex(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := search.UpdateIndex(ctx, l.db, nil); err != nil {
			t.Fatal(err)
		}
		// embed every chunk, cache the vectors, evict them all
		pending, err := l.db.UnembeddedChunks(ctx, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		ids, hashes, vecs := make([]int64, len(pending)), make([][]byte, len(pending)), make([][]float32, len(pending))
		for i, p := range pending {
			ids[i], hashes[i], vecs[i] = p.ID, []byte(fmt.Sprint(p.ID)), []float32{float32(len(p.Text)), 1, 2, 3}
		}
		if err := l.db.PutVectors(ctx, ids, vecs); err != nil {
			t.Fatal(err)
		}
		if err := l.db.PutEmbeddings(ctx, sp, hashes, vecs); err != nil {
			t.Fatal(err)
		}
		if _, err := l.db.PruneEmbeddingCache(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if err := l.db.SetSearchMeta(ctx, "test", fmt.Sprint(len(sizes))); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, walSize(t, l.db))
	}
	t.Logf("a rebuild writes %d KiB of WAL; the WAL after each round: %d KiB", rebuild>>10, kib(sizes))
	for i, s := range sizes {
		if s > restart+rebuild {
			t.Fatalf("after round %d the WAL holds %d KiB, more than the restart bound (%d KiB) and a rebuild (%d KiB): %d KiB",
				i+1, s>>10, restart>>10, rebuild>>10, kib(sizes))
		}
	}
}

func kib(sizes []int64) []int64 {
	out := make([]int64, len(sizes))
	for i, s := range sizes {
		out[i] = s >> 10
	}
	return out
}

// TestWALRestartsAfterReader: a reader using the WAL (another process)
// keeps its frames from being copied; the writer does not wait for it, and
// the first transaction after it ends starts the WAL over.
func TestWALRestartsAfterReader(t *testing.T) {
	l := walLedger(t)
	ctx := context.Background()
	const restart, keep = 512 << 10, 128 << 10
	if err := l.db.SetWALBounds(restart, keep); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(l.db.Path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	reader, err := other.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := reader.QueryRowContext(ctx, `SELECT count(*) FROM lines`).Scan(&n); err != nil {
		reader.Rollback()
		t.Fatal(err)
	}
	for range 2 { // more than the restart bound, held in the WAL by the reader
		if _, err := search.RebuildIndex(ctx, l.db, nil); err != nil {
			reader.Rollback()
			t.Fatal(err)
		}
	}
	held := walSize(t, l.db)
	l.db.WaitCheckpoint() // which copied what the reader did not hold
	reader.Rollback()
	if err := l.db.SetSearchMeta(ctx, "test", "1"); err != nil {
		t.Fatal(err)
	}
	if s := walSize(t, l.db); held < restart || s > keep {
		t.Fatalf("the WAL held %d KiB while read, %d KiB after the next transaction; want more than %d KiB, then at most %d KiB",
			held>>10, s>>10, restart>>10, keep>>10)
	}
}
