package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/klauspost/compress/zstd"
)

// fedIngest ingests dirs into db with its first search index fed by the
// import, finishes and installs it, and returns what the feed took and
// what the update after the install added.
func fedIngest(t *testing.T, db *sqlite.DB, fsys openclaw.FS, dirs ...string) (fed, after search.IndexStats) {
	t.Helper()
	ctx := context.Background()
	b, err := db.BuildIndexApart(ctx)
	if err != nil || b == nil {
		t.Fatalf("build apart: %v, %v", b, err)
	}
	defer b.Close()
	f := search.StartFeed(ctx, b)
	detach, err := db.FeedIndex(ctx, f)
	if err != nil || detach == nil {
		f.Stop()
		t.Fatalf("feed: %v", err)
	}
	_, err = (&collect.Collector{Store: db, FS: fsys}).Run(ctx, dirs)
	detach()
	if err != nil {
		f.Stop()
		t.Fatal(err)
	}
	if fed, err = f.Finish(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Install(ctx); err != nil {
		t.Fatal(err)
	}
	return fed, update(t, db)
}

// serialIngest ingests dirs into db and updates its index.
func serialIngest(t *testing.T, db *sqlite.DB, fsys openclaw.FS, dirs ...string) search.IndexStats {
	t.Helper()
	if _, err := (&collect.Collector{Store: db, FS: fsys}).Run(context.Background(), dirs); err != nil {
		t.Fatal(err)
	}
	return update(t, db)
}

// fedTwins is a tree ingested twice, into a ledger whose index updates
// build and one whose first index the import feeds.
func fedTwins(t *testing.T, dirs ...string) (serial, fed *sqlite.DB, st search.IndexStats) {
	t.Helper()
	tmp := t.TempDir()
	serial, fed = openLedger(t, filepath.Join(tmp, "serial.db")), openLedger(t, filepath.Join(tmp, "fed.db"))
	serialIngest(t, serial, openclaw.OS, dirs...)
	st, after := fedIngest(t, fed, openclaw.OS, dirs...)
	if after.Docs != 0 || after.Chunks != 0 {
		t.Errorf("the update after the fed build added %+v", after)
	}
	sameIndex(t, "after the first ingest", serial, fed)
	return serial, fed, st
}

// TestFeedIndex: an index the import feeds is the index an update builds,
// word for word, on the project's fixtures: transcripts of every version
// and class, compactions and branch summaries, CJK text, malformed and
// repaired lines, memory and workspace files, profiles and legacy dirs,
// agent databases (their sessions, archive rows and index registered
// before the files, as they are stored before them), archives. The feed
// took every document itself: none was read back.
func TestFeedIndex(t *testing.T) {
	for _, c := range feedTrees() {
		t.Run(c.name, func(t *testing.T) {
			dirs := c.tree(t, t.TempDir())
			_, _, st := fedTwins(t, dirs...)
			t.Logf("%+v", st)
			if st.Fed == 0 || st.Fed != st.Docs {
				t.Fatalf("the build took %d of its %d documents from the feed", st.Fed, st.Docs)
			}
		})
	}
}

// feedTree is a tree of state dirs a test writes under home.
type feedTree struct {
	name string
	tree func(t *testing.T, home string) []string
}

// feedTrees are the trees the feeds of an import are tried on.
func feedTrees() []feedTree {
	return []feedTree{
		{"cortex, memory, CJK", func(t *testing.T, home string) []string {
			tw := &twins{t: t, state: filepath.Join(home, ".openclaw")}
			tw.cortex = fixture.NewCortex(tw.state, fixture.CortexOptions{Sessions: 12, Seed: 7})
			if err := tw.cortex.Write(nil); err != nil {
				t.Fatal(err)
			}
			tw.file("workspace/MEMORY.md", "- the narwhal key lives in the vault\n- 数据库连接超时 after the deploy\n")
			tw.file("workspace/SOUL.md", "calm, precise\n")
			tw.file("agents/main/sessions/broken.jsonl", "{\"type\":\"session\",\"version\":3,\"id\":\"broken\"}\nundefined\n{\"type\":\"message\",\"id\":\"m1\",\"message\":{\"role\":\"user\",\"content\":\"数据库连接超时了\"}}\n")
			return []string{tw.state}
		}},
		{"edge cases", func(t *testing.T, home string) []string {
			m, err := fixture.WriteEdgeCases(home)
			if err != nil {
				t.Fatal(err)
			}
			return m.StateDirs
		}},
		{"workspaces", func(t *testing.T, home string) []string {
			m, err := fixture.WriteWorkspaces(home)
			if err != nil {
				t.Fatal(err)
			}
			return []string{m.StateDir}
		}},
		{"hostile", func(t *testing.T, home string) []string {
			dir := filepath.Join(home, ".openclaw")
			if _, err := fixture.WriteHostile(dir); err != nil {
				t.Fatal(err)
			}
			return []string{dir}
		}},
		{"sqlite era", func(t *testing.T, home string) []string {
			m, err := fixture.WriteSQLiteEra(filepath.Join(home, ".openclaw"))
			if err != nil {
				t.Fatal(err)
			}
			return []string{m.StateDir}
		}},
		// the genuine state dirs of both storage eras (skipped without
		// ../shared/corpus)
		{"corpus 2026.2.3", func(t *testing.T, _ string) []string {
			return []string{filepath.Join(testenv.Corpus(t), "openclaw-2026.2.3", ".openclaw")}
		}},
		{"corpus 2026.9.6", func(t *testing.T, _ string) []string {
			return []string{filepath.Join(testenv.Corpus(t), "openclaw-2026.9.6", ".openclaw")}
		}},
	}
}

// mishapTree is a tree whose first ingest meets mishaps: a compressed
// archive whose read fails part way (rolled back to its savepoint), and a
// live session rewritten while it is read.
type mishapTree struct {
	t       *testing.T
	state   string
	archive string // the archive's path
	live    string // the live session's
	before  []byte // what the live session held before it was rewritten
	mtime   time.Time
	packed  int // the archive's size
}

func newMishapTree(t *testing.T) *mishapTree {
	t.Helper()
	state := filepath.Join(t.TempDir(), ".openclaw")
	cortex := fixture.NewCortex(state, fixture.CortexOptions{Sessions: 8, Seed: 11})
	if err := cortex.Write(nil); err != nil {
		t.Fatal(err)
	}
	// a reset archive holding a copy of the first session, compressed
	plain, err := os.ReadFile(filepath.Join(state, filepath.FromSlash(cortex.Path(cortex.Sessions[0]))))
	if err != nil {
		t.Fatal(err)
	}
	m := &mishapTree{t: t, state: state, live: filepath.Join(state, filepath.FromSlash(cortex.Path(cortex.Sessions[3]))),
		archive: filepath.Join(state, "agents", "main", "sessions", fixture.UUID(rand.New(rand.NewSource(1)))+".jsonl.reset.2026-03-14T09-30-00.000Z.zst")}
	enc, _ := zstd.NewWriter(nil)
	var packed []byte // a frame a line: lines come out before the read fails
	for line := range bytes.Lines(plain) {
		packed = enc.EncodeAll(line, packed)
	}
	if err := os.WriteFile(m.archive, packed, 0o644); err != nil {
		t.Fatal(err)
	}
	m.packed = len(packed)
	if m.before, err = os.ReadFile(m.live); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(m.live)
	if err != nil {
		t.Fatal(err)
	}
	m.mtime = fi.ModTime()
	return m
}

// reads is a file system on which the first ingest's mishaps happen: the
// same file as another ledger read, and the same mishaps.
func (m *mishapTree) reads() openclaw.FS {
	if err := os.WriteFile(m.live, m.before, 0o644); err != nil {
		m.t.Fatal(err)
	}
	if err := os.Chtimes(m.live, m.mtime, m.mtime); err != nil {
		m.t.Fatal(err)
	}
	rewritten := bytes.ReplaceAll(m.before, []byte(`"role":"user"`), []byte(`"role":"user","x":"the rewritten narwhal"`))
	return &mishaps{FS: openclaw.OS, fail: m.archive, failAfter: int64(m.packed / 2), rewrite: m.live,
		rewriteAfter: int64(len(m.before) / 3), to: rewritten}
}

// shorten rewrites the live session shorter: the next ingest re-reads it
// (and reads the archive).
func (m *mishapTree) shorten() {
	b := m.before
	short := bytes.Replace(b[:bytes.LastIndexByte(b[:len(b)/2], '\n')+1], []byte(`"role":"user"`), []byte(`"role":"user","y":"the shorter narwhal"`), 1)
	if err := os.WriteFile(m.live, short, 0o644); err != nil {
		m.t.Fatal(err)
	}
}

// TestFeedDropsWhatItCannotHold: a source whose documents the feed may
// not hold as the ledger will (a compressed archive whose read fails part
// way, rolled back to its savepoint; a file rewritten while it is read,
// then re-read by the next ingest) leaves no chunk of it in the build, and
// the index is still the one updates build.
func TestFeedDropsWhatItCannotHold(t *testing.T) {
	m := newMishapTree(t)
	tmp := t.TempDir()
	serial, fed := openLedger(t, filepath.Join(tmp, "serial.db")), openLedger(t, filepath.Join(tmp, "fed.db"))
	serialIngest(t, serial, m.reads(), m.state)
	st, _ := fedIngest(t, fed, m.reads(), m.state)
	t.Logf("%+v", st)
	sameIndex(t, "after the first ingest", serial, fed)
	if st.Removed == 0 || st.Fed == 0 {
		t.Errorf("the feed took %+v: the archive's chunks should have gone", st)
	}
	if left := count(t, fed.Path, `SELECT count(*) FROM search_chunks c JOIN sources s ON s.id = c.source_id WHERE s.rel_path LIKE '%.zst'`); left != 0 {
		t.Fatalf("%d chunks of the rolled-back archive", left)
	}
	m.shorten()
	for _, db := range []*sqlite.DB{serial, fed} {
		rep, err := (&collect.Collector{Store: db, FS: openclaw.OS}).Run(context.Background(), []string{m.state})
		if err != nil {
			t.Fatal(err)
		}
		if st := update(t, db); rep.FilesReplaced != 1 || st.Removed == 0 || st.Docs == 0 {
			t.Fatalf("the next ingest: %d files re-read, the update %+v", rep.FilesReplaced, st)
		}
	}
	sameIndex(t, "after the re-read", serial, fed)
}

// mishaps is a file system on which sequential reads of one file fail
// part way, and another file is rewritten part way through its read.
type mishaps struct {
	openclaw.FS
	fail, rewrite           string
	failAfter, rewriteAfter int64
	to                      []byte
}

func (m *mishaps) Open(p string) (openclaw.File, error) {
	f, err := m.FS.Open(p)
	if err != nil {
		return f, err
	}
	switch p {
	case m.fail:
		return &mishapFile{File: f, left: m.failAfter, at: func() error { return errors.New("input/output error") }}, nil
	case m.rewrite:
		to := m.to
		return &mishapFile{File: f, left: m.rewriteAfter, at: func() error {
			if to != nil {
				err := os.WriteFile(p, to, 0o644)
				to = nil
				return err
			}
			return nil
		}}, nil
	}
	return f, nil
}

// mishapFile runs at once left bytes are read: its error ends the read.
type mishapFile struct {
	openclaw.File
	left int64
	at   func() error
}

func (f *mishapFile) Read(b []byte) (int, error) {
	if f.left <= 0 {
		if err := f.at(); err != nil {
			return 0, err
		}
		return f.File.Read(b)
	}
	n, err := f.File.Read(b[:min(int64(len(b)), f.left)])
	f.left -= int64(n)
	return n, err
}

// TestFeedOutOfOrder: a source fed below sources fed already (as an
// import that registered its sources in another order than it stores them
// would) takes every source above it out of the build at once, and the
// installed index is still the one updates build: those sources are read
// back from the ledger after the ones fed.
func TestFeedOutOfOrder(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	state := filepath.Join(tmp, ".openclaw")
	if _, err := fixture.WriteCortex(state, fixture.CortexOptions{Sessions: 12, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	serial := openLedger(t, filepath.Join(tmp, "serial.db"))
	serialIngest(t, serial, openclaw.OS, state)
	for _, c := range []struct {
		name  string
		order func(ids []clawledger.IndexSource) []clawledger.IndexSource
	}{
		{"the upper half first", func(s []clawledger.IndexSource) []clawledger.IndexSource {
			return append(slices.Clone(s[len(s)/2:]), s[:len(s)/2]...)
		}},
		{"reversed", func(s []clawledger.IndexSource) []clawledger.IndexSource {
			s = slices.Clone(s)
			slices.Reverse(s)
			return s
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fed := openLedger(t, filepath.Join(t.TempDir(), "fed.db"))
			if _, err := (&collect.Collector{Store: fed, FS: openclaw.OS}).Run(ctx, []string{state}); err != nil {
				t.Fatal(err)
			}
			b, err := fed.BuildIndexApart(ctx)
			if err != nil || b == nil {
				t.Fatalf("build apart: %v, %v", b, err)
			}
			defer b.Close()
			tx, err := b.BeginIndex(ctx)
			if err != nil {
				t.Fatal(err)
			}
			srcs, err := tx.Behind(ctx)
			tx.Rollback()
			if err != nil {
				t.Fatal(err)
			}
			srcs = slices.DeleteFunc(srcs, func(s clawledger.IndexSource) bool { return s.Kind != clawledger.KindTranscript })
			f := search.StartFeed(ctx, b)
			for _, s := range c.order(srcs) {
				docs, offsets, err := fed.TranscriptDocs(ctx, &s, 0, 1<<20)
				if err != nil {
					f.Stop()
					t.Fatal(err)
				}
				for i := range docs {
					f.Doc(docs[i], offsets[i])
				}
				f.Stored(s.ID, s.LineCount, s.AgentID, s.SessionID)
			}
			st, err := f.Finish(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Install(ctx); err != nil {
				t.Fatal(err)
			}
			if after := update(t, fed); after.Docs != 0 {
				t.Errorf("the update after the build added %+v", after)
			}
			t.Logf("%+v", st)
			if st.Removed == 0 || st.Fed == 0 || st.Fed == st.Docs {
				t.Errorf("the build took %+v: some fed, some taken out and read back", st)
			}
			sameIndex(t, c.name, serial, fed)
		})
	}
}
