package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/postgres"
)

// The writer sends a round of rows in the background once enough of them
// gathered, and builds the next meanwhile (batch.go). These tests hold it
// to the guarantees of a round sent in the foreground.

// TestLostConnectionInFlight ends the writer's server process while a
// round is in flight, once the writer has built what comes next and waits
// for it (the round's goroutine holds the round back until the writer
// waits: no timing): the writer learns of the lost connection from the
// round's answer, reconnects, sends its batch again, the lost round with
// it, and the ledger answers every report as the SQLite ledger of the same
// trees does.
func TestLostConnectionInFlight(t *testing.T) {
	dsn := pgtest.Server(t)
	defer postgres.SetBatchSizes(64<<10, 4<<10)()
	dirs := faultTrees(t)
	lite := openSQLite(t)
	ingest(t, lite, dirs...)
	for _, at := range []int{1, 3, 15} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			pg := openPG(t, pgtest.InSchema(t, dsn, pgtest.NewSchema(t, dsn)), "h")
			// the round's goroutine counts flights and the writer counts
			// waits, each on its own: the nth wait is the nth flight's (of
			// the first lane: each lane has its rounds in flight)
			flights, waits, waited, fired := 0, 0, make(chan struct{}), make(chan error, 1)
			postgres.SetLaneHook(pg, func(lane int, stage string) error {
				if lane != 0 {
					return nil
				}
				switch stage {
				case "wait":
					if waits++; waits == at {
						close(waited)
					}
				case "inflight":
					if flights++; flights == at {
						<-waited
						fired <- endBackend(dsn, postgres.WriterPID(pg))
					}
				}
				return nil
			})
			ingest(t, pg, dirs...)
			select {
			case err := <-fired:
				check(t, err)
			default:
				t.Fatalf("the ingest sent %d rounds in the background, not %d", flights, at)
			}
			postgres.SetWriterHook(pg, nil)
			sameReports(t, lite, pg)
			if rep := ingest(t, pg, dirs...); rep.LinesIngested != 0 {
				t.Fatalf("a second ingest stored %d lines", rep.LinesIngested)
			}
		})
	}
}

// lineRounds opens a writer on a ledger of its own that sends every line
// in a round of its own, with a state dir /state; src registers a
// transcript in it.
func lineRounds(t *testing.T) (dsn string, pg *postgres.DB, dir int64, src func(rel string) *clawledger.Source) {
	t.Helper()
	t.Cleanup(postgres.SetBatchSizes(1<<30, 1))
	dsn = pgtest.DSN(t)
	pg = openPG(t, dsn, "h")
	ctx := context.Background()
	dir, err := pg.StateDirID(ctx, "/state")
	check(t, err)
	return dsn, pg, dir, func(rel string) *clawledger.Source {
		s, err := pg.EnsureSource(ctx, &clawledger.Source{StateDirID: dir, Rel: rel, Kind: clawledger.KindTranscript, Class: clawledger.ClassLive})
		check(t, err)
		return s
	}
}

// addLine adds a malformed line numbered n to a source being written.
func addLine(t *testing.T, tx clawledger.IngestTx, n int) error {
	t.Helper()
	return tx.Add(&clawledger.Record{Line: clawledger.Line{Offset: int64(n) * 16, No: int64(n + 1),
		Raw: []byte(fmt.Sprintf("not json %06d", n)), Status: clawledger.LineMalformed, Error: "not JSON"}})
}

// TestFailedRoundInFlight: a round that fails in the server while the
// writer goes on fails the writer's next round trip (or Flush, or Close),
// naming the source it was sent for, and the batch is rolled back: none of
// its rows and cursors are stored, and the writer writes again afterwards.
// With one lane the next round trip is b's first line; with two, b goes on
// the second lane, and the first commits before it takes b.
func TestFailedRoundInFlight(t *testing.T) {
	for _, lanes := range []int{1, 2} {
		t.Run(fmt.Sprint(lanes), func(t *testing.T) {
			defer postgres.SetLanes(lanes)()
			failedRoundInFlight(t, lanes)
		})
	}
}

func failedRoundInFlight(t *testing.T, lanes int) {
	ctx := context.Background()
	dsn, pg, _, src := lineRounds(t)
	a, b := src("agents/main/sessions/a.jsonl"), src("agents/main/sessions/b.jsonl")
	check(t, pg.Flush(ctx))
	// the server refuses a's lines
	refuse := func() {
		pgtest.Exec(t, dsn, `CREATE OR REPLACE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'line refused'; END $$`,
			fmt.Sprintf(`CREATE TRIGGER refuse BEFORE INSERT ON lines FOR EACH ROW WHEN (NEW.source_id = %d) EXECUTE FUNCTION refuse()`, a.ID))
	}
	refuse()
	stored := func() int64 {
		return queryInt(t, dsn, `SELECT (SELECT count(*) FROM lines) + (SELECT coalesce(sum(end_offset), 0) FROM sources)`)
	}
	failed := func(what string, err error, want int64) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "/state/agents/main/sessions/a.jsonl") || !strings.Contains(err.Error(), "line refused") {
			t.Fatalf("%s after a's round failed: %v; want the server's error, naming a", what, err)
		}
		if n := stored(); n != want {
			t.Fatalf("%s after a's round failed: %d lines and offsets stored, want %d", what, n, want)
		}
	}
	write := func(s *clawledger.Source) clawledger.IngestTx {
		tx, _, err := pg.Begin(ctx, s, clawledger.Append)
		check(t, err)
		// a round sent in the background: Add does not wait for its answer
		if err := addLine(t, tx, 0); err != nil {
			t.Fatalf("the line whose round went in the background: %v", err)
		}
		return tx
	}

	// the next round trip: b's first line
	tx := write(a)
	check(t, tx.Commit(clawledger.Cursor{Offset: 16, Lines: 1}, nil)) // queued, not sent
	tx, _, err := pg.Begin(ctx, b, clawledger.Append)
	if lanes == 1 {
		check(t, err)
		err = addLine(t, tx, 0)
	}
	failed("b's first round trip", err, 0)
	check(t, pg.Flush(ctx)) // nothing left to commit

	// Flush
	write(a)
	failed("Flush", pg.Flush(ctx), 0)

	// the writer writes again
	pgtest.Exec(t, dsn, `DROP TRIGGER refuse ON lines`)
	tx = write(a)
	check(t, addLine(t, tx, 1))
	check(t, tx.Commit(clawledger.Cursor{Offset: 32, Lines: 2}, nil))
	check(t, pg.Flush(ctx))
	if n := stored(); n != 2+32 {
		t.Fatalf("lines and offsets stored after the failed rounds: %d, want 34", n)
	}

	// Close
	refuse()
	a.Cursor = clawledger.Cursor{Offset: 32, Lines: 2}
	write(a)
	failed("Close", pg.Close(), 34)
}

// TestReadSeesRoundsInFlight: a read in the write batch (here, forgetting
// a state dir counts what it deletes) sees the rows of the round in flight
// and of those before it, and the statements queued since.
func TestReadSeesRoundsInFlight(t *testing.T) {
	ctx := context.Background()
	dsn, pg, dir, src := lineRounds(t)
	check(t, pg.Flush(ctx))
	tx, _, err := pg.Begin(ctx, src("a.jsonl"), clawledger.Append)
	check(t, err)
	const lines = 50
	for n := range lines {
		check(t, addLine(t, tx, n))
	}
	b := src("b.jsonl") // its row queued, the last line's round in flight
	if again, err := pg.EnsureSource(ctx, b); err != nil || again.ID != b.ID {
		t.Fatalf("the queued source read again: %+v, %v; want id %d", again, err, b.ID)
	}
	f, err := pg.ForgetStateDir(ctx, dir)
	check(t, err)
	if f.Lines != lines || f.Sources != 2 {
		t.Fatalf("forgetting counted %d lines and %d sources, want %d and 2", f.Lines, f.Sources, lines)
	}
	if n := queryInt(t, dsn, `SELECT (SELECT count(*) FROM lines) + (SELECT count(*) FROM sources)`); n != 0 {
		t.Fatalf("%d lines and sources left after forgetting", n)
	}
}
