package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// TestRowLoopsCheckErr: every loop over rows in this package ends by
// reading rows.Err() (or closeRows): SQLite reports a damaged page only
// when a row on it is read, and rows.Close() does not return that error,
// so a loop that checks only Close returns the rows before the damage as
// if they were all (search hits, cortex terms and the embedding cache did).
func TestRowLoopsCheckErr(t *testing.T) {
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*.go")
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			body := string(src[fset.Position(fn.Pos()).Offset:fset.Position(fn.End()).Offset])
			if strings.Contains(body, ".Next()") && !strings.Contains(body, ".Err()") && !strings.Contains(body, "closeRows(") {
				t.Errorf("%s: %s loops over rows without reading rows.Err()", fset.Position(fn.Pos()), fn.Name.Name)
			}
		}
	}
}

// leafPages lists the leaf pages of a table or index (dbstat), in page
// order; the test is skipped where the driver has no dbstat.
func leafPages(t *testing.T, path, name string) []int64 {
	t.Helper()
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pages, err := queryAll(context.Background(), db, func(r scanner) (p int64, err error) { return p, r.Scan(&p) },
		`SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno`, name)
	if err != nil {
		t.Skipf("no dbstat: %v", err)
	}
	return pages
}

// damagePage overwrites a page of the database file with garbage.
func damagePage(t *testing.T, path string, page int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, PageSize), (page-1)*PageSize); err != nil {
		t.Fatal(err)
	}
}

// chunkLedger is a ledger whose search_chunks span many pages.
func chunkLedger(t *testing.T) (path string, ids []int64) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "ledger.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := db.StateDirID(ctx, "/state")
	if err != nil {
		t.Fatal(err)
	}
	src, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: id, Rel: "agents/main/sessions/s.jsonl", Kind: clawledger.KindTranscript})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 1500 {
		res, err := db.w.ExecContext(ctx, `INSERT INTO search_chunks(kind, source_id, hash, text) VALUES('message', ?, x'00', ?)`,
			src.ID, strings.Repeat("word ", 200)+string(rune('a'+i%26)))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := res.LastInsertId()
		ids = append(ids, n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path, ids
}

// TestDamageSurfaces: a page damaged in the middle of a table fails the
// read that reaches it (with an error the backend diagnoses as damage),
// however many rows came before it.
func TestDamageSurfaces(t *testing.T) {
	ctx := context.Background()
	path, ids := chunkLedger(t)
	pages := leafPages(t, path, "search_chunks")
	if len(pages) < 10 {
		t.Fatalf("search_chunks on %d pages", len(pages))
	}
	damagePage(t, path, pages[len(pages)/2])
	db, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hits, err := db.Hits(ctx, ids)
	if !damaged(err) {
		t.Fatalf("Hits over a damaged page: %d hits, %v; want the damage reported", len(hits), err)
	}
	loc, _ := clawledger.ParseLocation(path)
	if d := loc.Diagnose(err); !errors.Is(d, clawledger.ErrDamaged) || !strings.Contains(d.Error(), "is damaged") {
		t.Errorf("Diagnose: %v", d)
	}
}

// TestSalvage: a salvage of a ledger with a page damaged in the middle of
// a table copies every other row as it was, names the rowids it lost
// (only those around the damaged page), makes the indexes again, keeps
// the AUTOINCREMENT counters, and leaves a sound file; a truncated ledger
// gives up what is past the cut and nothing else; a salvage never writes
// over an existing file.
func TestSalvage(t *testing.T) {
	ctx := context.Background()
	path, ids := chunkLedger(t)
	pristine, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{}
	rows, _ := pristine.r.QueryContext(ctx, `SELECT id, text FROM search_chunks`)
	for rows.Next() {
		var id int64
		var text string
		rows.Scan(&id, &text)
		want[id] = text
	}
	if err := closeRows(rows); err != nil || len(want) != len(ids) {
		t.Fatal(err, len(want))
	}
	pristine.Close()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pages := leafPages(t, path, "search_chunks")
	perPage := int64(len(ids) / len(pages))

	salvage := func(t *testing.T, damage func()) (*clawledger.SalvageReport, *DB) {
		t.Helper()
		if err := os.WriteFile(path, orig, 0o600); err != nil {
			t.Fatal(err)
		}
		damage()
		db, err := Open(ctx, path, Options{ReadOnly: true, Damaged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		out := filepath.Join(t.TempDir(), "salvaged.db")
		rep, err := db.Salvage(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Integrity) != 1 || rep.Integrity[0] != "ok" {
			t.Errorf("the salvaged ledger: %v", rep.Integrity)
		}
		s, err := Open(ctx, out, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return rep, s
	}
	table := func(rep *clawledger.SalvageReport, name string) clawledger.SalvagedTable {
		for _, tb := range rep.Tables {
			if tb.Name == name {
				return tb
			}
		}
		t.Fatalf("no %s in %+v", name, rep.Tables)
		return clawledger.SalvagedTable{}
	}
	check := func(t *testing.T, s *DB) (copied int64) {
		t.Helper()
		rows, err := s.r.QueryContext(ctx, `SELECT id, text FROM search_chunks INDEXED BY search_chunks_source WHERE source_id > 0`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var text string
			rows.Scan(&id, &text)
			if want[id] != text {
				t.Errorf("chunk %d differs", id)
			}
			copied++
		}
		if err := closeRows(rows); err != nil {
			t.Fatal(err)
		}
		var seq int64
		if err := s.r.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'search_chunks'`).Scan(&seq); err != nil || seq != int64(len(ids)) {
			t.Errorf("the AUTOINCREMENT counter: %d %v, want %d", seq, err, len(ids))
		}
		return copied
	}

	t.Run("page", func(t *testing.T) {
		rep, s := salvage(t, func() { damagePage(t, path, pages[len(pages)/2]) })
		tb := table(rep, "search_chunks")
		copied := check(t, s)
		lost := int64(len(ids)) - copied
		if copied != tb.Rows || len(tb.Lost) != 1 || lost == 0 || lost > 2*perPage {
			t.Errorf("copied %d of %d (about %d a page), lost %v", copied, len(ids), perPage, tb.Lost)
		}
		for _, other := range rep.Tables {
			if other.Name != "search_chunks" && len(other.Lost) > 0 {
				t.Errorf("%s lost %v", other.Name, other.Lost)
			}
		}
	})
	t.Run("truncated", func(t *testing.T) {
		rep, s := salvage(t, func() {
			if err := os.Truncate(path, (pages[len(pages)/2]-1)*PageSize); err != nil {
				t.Fatal(err)
			}
		})
		copied := check(t, s)
		if tb := table(rep, "search_chunks"); copied == 0 || copied == int64(len(ids)) || len(tb.Lost) == 0 {
			t.Errorf("copied %d of %d, lost %v", copied, len(ids), tb.Lost)
		}
	})
	t.Run("exists", func(t *testing.T) {
		db, err := Open(ctx, path, Options{ReadOnly: true, Damaged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		out := filepath.Join(t.TempDir(), "there")
		os.WriteFile(out, []byte("mine"), 0o600)
		if _, err := db.Salvage(ctx, out); clawledger.ErrorCode(err) != clawledger.ECONFLICT {
			t.Errorf("salvage over a file: %v", err)
		}
		if b, _ := os.ReadFile(out); string(b) != "mine" {
			t.Error("the file was written")
		}
	})
}
