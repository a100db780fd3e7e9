package sqlite_test

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/storetest"
)

// copyTree copies a state dir (files and symlinks) but for the files skip
// names (relative slash paths).
func copyTree(t *testing.T, from, to string, skip func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case skip(filepath.ToSlash(rel)):
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case d.IsDir():
			return os.MkdirAll(dst, 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// derived brings every derived layer of a ledger up to date: the search
// index (with a vector for every chunk), episodic capture, the cortex.
func derived(t *testing.T, db *sqlite.DB) {
	t.Helper()
	ctx := context.Background()
	if _, err := search.UpdateIndex(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UseVectorSpace(ctx, "test/4"); err != nil {
		t.Fatal(err)
	}
	for {
		pending, err := db.UnembeddedChunks(ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			break
		}
		ids, vecs := make([]int64, len(pending)), make([][]float32, len(pending))
		for i, p := range pending {
			ids[i], vecs[i] = p.ID, []float32{1, 0, 0, float32(p.ID)}
		}
		if err := db.PutVectors(ctx, ids, vecs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := episodes.Capture(ctx, db, episodes.CaptureOptions{Now: time.UnixMilli(1_800_000_000_000)}); err != nil {
		t.Fatal(err)
	}
	if _, err := (&cortex.Builder{Ledger: db, Store: db}).Update(ctx); err != nil {
		t.Fatal(err)
	}
}

// tableCounts counts the rows of every table of a ledger, but for those
// that no state dir's data is in: the schema's bookkeeping, the ledger's
// audit salt, caches and settings, and full-text segments (their layout
// depends on the order of writes; the rows they index are counted).
func tableCounts(t *testing.T, db *sqlite.DB) map[string]int64 {
	t.Helper()
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(db.Path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string]int64{}
	for _, n := range names {
		switch {
		case slices.Contains([]string{"schema_migrations", "sqlite_sequence", "audit_salt", "embedding_cache", "search_meta", "cortex_meta"}, n),
			strings.HasSuffix(n, "_data"), strings.HasSuffix(n, "_idx"), strings.HasSuffix(n, "_config"):
			continue
		}
		var c int64
		if err := raw.QueryRow(`SELECT count(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		out[n] = c
	}
	return out
}

// TestForgetCoversEveryTable: a ledger of two state dirs A and B (B a
// copy of A but for one transcript and one cron run log: they share
// sessions, usage copies and captured events) with every derived layer and A's audit trail, once A is
// forgotten, holds in every table as many rows as a ledger that only ever
// read B, and no orphaned row. A table forget does not know of that holds
// a state dir's rows fails it.
func TestForgetCoversEveryTable(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	a := m.StateDirs[0]
	if _, err := fixture.WriteAudit(a, true); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(t.TempDir(), "b", ".openclaw")
	var dropped string
	copyTree(t, a, b, func(rel string) bool {
		if dropped == "" && strings.HasPrefix(rel, "agents/main/sessions/") && strings.HasSuffix(rel, ".jsonl") {
			dropped = rel
			return true
		}
		return rel == "cron/runs/job-1.jsonl" // its failed run is an ops.alert event
	})
	open := func() *sqlite.DB {
		db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	ingest := func(db *sqlite.DB, dirs ...string) {
		t.Helper()
		if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(ctx, dirs); err != nil {
			t.Fatal(err)
		}
	}

	both := open()
	ingest(both, a, b)
	storetest.IngestAudit(t, both, a, home, 1_800_000_000_000)
	derived(t, both)
	onlyB := open()
	ingest(onlyB, b)
	derived(t, onlyB)

	dirs, err := both.StateDirList(ctx)
	if err != nil || len(dirs) != 2 || dirs[0].Path != a {
		t.Fatalf("state dirs: %+v, %v", dirs, err)
	}
	before := tableCounts(t, both)
	f, err := both.ForgetStateDir(ctx, dirs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if f.Sources == 0 || f.Lines == 0 || f.Sessions == 0 || f.WorkspaceFiles == 0 || f.CronJobs == 0 || f.Chunks == 0 ||
		f.Events == 0 || f.Episodes == 0 || f.AuditRows == 0 {
		t.Errorf("forgot too little of %s: %+v", a, f)
	}
	if f.Events >= before["episodic_events"] {
		t.Errorf("forgot every event, also those B's copy of the transcripts yields: %+v", f)
	}
	// usage reads kept sums per quarter hour: those of the lines that went
	// are summed again when the forget commits
	gotUsage, err := both.Usage(ctx, clawledger.UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if wantUsage, err := onlyB.Usage(ctx, clawledger.UsageFilter{}); err != nil || !reflect.DeepEqual(gotUsage, wantUsage) {
		t.Errorf("usage after forgetting %s:\n got %+v\nwant %+v (%v)", a, gotUsage, wantUsage, err)
	}
	derived(t, both) // marks the derived layers current again, as onlyB's are
	got, want := tableCounts(t, both), tableCounts(t, onlyB)
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d rows after forgetting %s (%d before), %d in a ledger of %s alone", name, got[name], a, before[name], n, b)
		}
	}
	if orphans, err := both.Orphans(ctx); err != nil || len(orphans) > 0 {
		t.Errorf("orphans: %+v, %v", orphans, err)
	}
	if dirs, err := both.StateDirList(ctx); err != nil || len(dirs) != 1 || dirs[0].Path != b {
		t.Errorf("state dirs left: %+v, %v", dirs, err)
	}
	if _, err := both.ForgetStateDir(ctx, 999); clawledger.ErrorCode(err) != clawledger.ENOTFOUND {
		t.Errorf("forgetting a state dir the ledger does not hold: %v", err)
	}
	t.Logf("dropped %s from the copy; forgot %+v", dropped, f)
}
