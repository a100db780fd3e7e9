package sqlite_test

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/indexdigest"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
)

// twins are two ledgers of one state dir: one indexed by updates, one
// whose first index is built apart.
type twins struct {
	t             *testing.T
	state         string
	cortex        *fixture.CortexManifest
	serial, apart *sqlite.DB
	rnd           *rand.Rand
}

func newTwins(t *testing.T) *twins {
	t.Helper()
	dir := t.TempDir()
	tw := &twins{t: t, state: filepath.Join(dir, ".openclaw"), rnd: rand.New(rand.NewSource(3))}
	tw.cortex = fixture.NewCortex(tw.state, fixture.CortexOptions{Sessions: 12, Seed: 7})
	if err := tw.cortex.Write(func(s *fixture.CortexSession) int { return len(s.Lines) / 2 }); err != nil {
		t.Fatal(err)
	}
	tw.file("workspace/MEMORY.md", "- the narwhal key lives in the vault\n- 数据库连接超时 after the deploy\n")
	tr := fixture.NewTranscript(tw.rnd, fixture.UUID(tw.rnd), 3, time.Unix(1710000000, 0), "/home/x")
	tr.User("数据库连接超时了，怎么办？")
	tr.AssistantText("检查数据库连接池的配置 and the kubernetes probe")
	tw.file("agents/main/sessions/"+tr.ID+".jsonl", string(tr.Bytes()))
	tw.serial, tw.apart = openLedger(t, filepath.Join(dir, "serial.db")), openLedger(t, filepath.Join(dir, "apart.db"))
	return tw
}

func openLedger(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func (tw *twins) file(rel, content string) {
	tw.t.Helper()
	path := filepath.Join(tw.state, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tw.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tw.t.Fatal(err)
	}
}

// collect ingests the state dir into both ledgers.
func (tw *twins) collect() {
	tw.t.Helper()
	for _, db := range []*sqlite.DB{tw.serial, tw.apart} {
		if _, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(context.Background(), []string{tw.state}); err != nil {
			tw.t.Fatal(err)
		}
	}
}

// update runs an index update on db and returns what it added.
func update(t *testing.T, db *sqlite.DB) search.IndexStats {
	t.Helper()
	st, err := search.UpdateIndex(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, differ, _, err := db.LengthMismatches(context.Background()); err != nil || len(differ) > 0 {
		t.Fatalf("chunks whose kept lengths differ from FTS5's: %v, %v", differ, err)
	}
	return st
}

// same fails unless both ledgers' indexes hold the same: every chunk,
// length, total, source's progress and word instance.
func (tw *twins) same(when string) {
	tw.t.Helper()
	sameIndex(tw.t, when, tw.serial, tw.apart)
}

// sameIndex fails unless the index of serial (built by updates) and that
// of apart hold the same.
func sameIndex(t *testing.T, when string, serial, apart *sqlite.DB) {
	t.Helper()
	sameDigests(t, when+": the indexes", indexdigest.Write, serial, apart)
}

// sameDigests fails unless two ledgers' digests (indexdigest's) are the
// same, neither of an empty table of the first or fifth query, showing
// the first row they differ on.
func sameDigests(t *testing.T, what string, write func(context.Context, string, io.Writer) ([]int, error), serial, other *sqlite.DB) {
	t.Helper()
	var got [2]bytes.Buffer
	for i, db := range []*sqlite.DB{serial, other} {
		counts, err := write(context.Background(), db.Path, &got[i])
		if err != nil {
			t.Fatal(err)
		}
		if counts[0] == 0 || counts[4] == 0 {
			t.Fatalf("%s: one is empty (%v rows)", what, counts)
		}
	}
	if bytes.Equal(got[0].Bytes(), got[1].Bytes()) {
		return
	}
	a, b := strings.Split(got[0].String(), "\n"), strings.Split(got[1].String(), "\n")
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Fatalf("%s differ at row %d:\nupdated: %.300s\nother:   %.300s", what, i, a[i], b[i])
		}
	}
	t.Fatalf("%s differ: %d rows updated, %d in the other", what, len(a), len(b))
}

// buildApart builds the apart ledger's index apart and installs it.
func (tw *twins) buildApart() {
	tw.t.Helper()
	ctx := context.Background()
	b, err := tw.apart.BuildIndexApart(ctx)
	if err != nil || b == nil {
		tw.t.Fatalf("build apart: %v, %v", b, err)
	}
	path := tw.apart.Path + sqlite.ApartSuffix
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		tw.t.Fatalf("the build's file: %v, %v", fi, err)
	}
	st, err := search.BuildApart(ctx, b, nil)
	if err != nil || st.Chunks == 0 {
		tw.t.Fatalf("build: %+v, %v", st, err)
	}
	// until installed, the ledger's index is the empty one
	if n, _, err := tw.apart.SearchIndexCounts(ctx); err != nil || n != 0 {
		tw.t.Fatalf("before Install the ledger has %d chunks (%v)", n, err)
	}
	if hits := search1(tw.t, tw.apart, "narwhal"); len(hits) != 0 {
		tw.t.Fatalf("before Install: %d hits", len(hits))
	}
	if err := b.Install(ctx); err != nil {
		tw.t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		tw.t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		tw.t.Fatalf("the build's file is left: %v", err)
	}
	// the update after it finds nothing left, and marks the index current
	if st := update(tw.t, tw.apart); st.Chunks != 0 || st.Docs != 0 {
		tw.t.Fatalf("the update after the build added %+v", st)
	}
	if cur, err := tw.apart.SearchIndexCurrent(ctx); err != nil || !cur {
		tw.t.Fatalf("not current after the update: %v", err)
	}
}

func search1(t *testing.T, db *sqlite.DB, q string) []search.Hit {
	t.Helper()
	res, err := (&search.Engine{Store: db}).Search(context.Background(), search.Request{Query: q, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	return res.Hits
}

// TestBuildIndexApart: an index built apart and installed is the index
// updates build, word for word; and it goes on as one: appends, a
// replaced transcript and an edited memory file are taken in by updates
// on the writer's connection as in the other ledger.
func TestBuildIndexApart(t *testing.T) {
	tw := newTwins(t)
	tw.collect()
	ctx := context.Background()
	// both indexed and emptied first: the chunk ids go on from a sequence
	// already used, and the writer's connection has read FTS5's structure
	// (which it keeps until another connection commits)
	for _, db := range []*sqlite.DB{tw.serial, tw.apart} {
		update(t, db)
		search1(t, db, "narwhal")
		if err := db.ClearSearchIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	update(t, tw.serial)
	tw.buildApart()
	tw.same("after the build")
	for _, q := range []string{"narwhal", "数据库连接超时", "kubernetes", `"the vault"`} {
		want, got := search1(t, tw.serial, q), search1(t, tw.apart, q)
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("%s: %d hits apart, %d updated", q, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
				t.Fatalf("%s: hit %d: %+v apart, %+v updated", q, i, got[i], want[i])
			}
		}
	}

	// the rest of every transcript, one transcript replaced, memory edited
	if err := tw.cortex.Write(nil); err != nil {
		t.Fatal(err)
	}
	s := tw.cortex.Sessions[0]
	tr := fixture.NewTranscript(tw.rnd, s.ID, 3, time.Unix(1720000000, 0), "/home/y")
	tr.User("a replaced transcript about the narwhal")
	tw.file(tw.cortex.Path(s), string(tr.Bytes()))
	tw.file("workspace/MEMORY.md", "- the narwhal key moved\n")
	tw.collect()
	for _, db := range []*sqlite.DB{tw.serial, tw.apart} {
		if st := update(t, db); st.Chunks == 0 || st.Removed == 0 {
			t.Fatalf("the update after the changes: %+v", st)
		}
	}
	tw.same("after the changes")
}

// TestInstallRefusesAWrittenIndex: a build is installed only into the
// empty index it began from; one written meanwhile is left as it is.
func TestInstallRefusesAWrittenIndex(t *testing.T) {
	tw := newTwins(t)
	tw.collect()
	ctx := context.Background()
	b, err := tw.apart.BuildIndexApart(ctx)
	if err != nil || b == nil {
		t.Fatalf("build apart: %v, %v", b, err)
	}
	defer b.Close()
	if _, err := search.BuildApart(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	update(t, tw.apart)
	update(t, tw.serial)
	if err := b.Install(ctx); err == nil || !strings.Contains(err.Error(), "written while it was built") {
		t.Fatalf("Install over a written index: %v", err)
	}
	tw.same("after the refused install")
}

// TestBuildIndexApartNeedsAnEmptyIndex: no build apart of an index that
// holds anything (a chunk, or the length of a chunk since deleted); a
// killed build's file is replaced by the next.
func TestBuildIndexApartNeedsAnEmptyIndex(t *testing.T) {
	tw := newTwins(t)
	tw.collect()
	ctx := context.Background()
	path := tw.apart.Path + sqlite.ApartSuffix
	if err := os.WriteFile(path, []byte("a killed build's pages"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := tw.apart.BuildIndexApart(ctx)
	if err != nil || b == nil {
		t.Fatalf("build apart over a killed build's file: %v, %v", b, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	update(t, tw.apart)
	var none clawledger.ApartIndex
	if b, err := tw.apart.BuildIndexApart(ctx); err != nil || b != none {
		t.Fatalf("build apart of a held index: %v, %v", b, err)
	}
	// a transcript forgotten: its chunks go, their lengths stay
	id, err := tw.apart.StateDirID(ctx, tw.state)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tw.apart.ForgetStateDir(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n, _, err := tw.apart.SearchIndexCounts(ctx); err != nil || n != 0 {
		t.Fatalf("%d chunks after forgetting the state dir (%v)", n, err)
	}
	if b, err := tw.apart.BuildIndexApart(ctx); err != nil || b != none {
		t.Fatalf("build apart over kept lengths: %v, %v", b, err)
	}
}
