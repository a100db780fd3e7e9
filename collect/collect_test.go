package collect_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/sqlite"
)

type ledger struct {
	t  *testing.T
	db *sqlite.DB
	c  *collect.Collector
}

func newLedger(t *testing.T) *ledger {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &ledger{t: t, db: db, c: &collect.Collector{Store: db, FS: openclaw.OS}}
}

func (l *ledger) run(dirs ...string) *collect.Report {
	l.t.Helper()
	rep, err := l.c.Run(context.Background(), dirs)
	if err != nil {
		l.t.Fatal(err)
	}
	return rep
}

// exported returns what export --all would write: rel path -> bytes.
func (l *ledger) exported(includeGone bool) map[string][]byte {
	l.t.Helper()
	ctx := context.Background()
	srcs, err := l.db.ExportSources(ctx, includeGone)
	if err != nil {
		l.t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, s := range srcs {
		var b bytes.Buffer
		if err := l.db.Lines(ctx, s.ID, func(line *clawledger.Line) error {
			b.Write(line.Raw)
			b.WriteByte('\n')
			return nil
		}); err != nil {
			l.t.Fatal(err)
		}
		out[filepath.Base(s.StateDir)+"/"+s.Rel] = b.Bytes()
	}
	return out
}

// uptoNewline is what a file's ledger copy must equal.
func uptoNewline(b []byte) []byte {
	i := bytes.LastIndexByte(b, '\n')
	return b[:i+1]
}

func (l *ledger) mustMirror(dir string, rels ...string) {
	l.t.Helper()
	got := l.exported(false)
	for _, rel := range rels {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			l.t.Fatal(err)
		}
		key := filepath.Base(dir) + "/" + rel
		if !bytes.Equal(got[key], uptoNewline(data)) {
			l.t.Fatalf("%s: ledger has %d bytes:\n%q\nfile has (up to its last newline):\n%q", rel, len(got[key]), got[key], uptoNewline(data))
		}
	}
}

func TestEdgeCasesRoundTrip(t *testing.T) {
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	rec := testenv.NewRecordingFS()
	l.c.FS = rec
	rep := l.run(m.StateDirs...)
	for _, op := range rec.Ops() {
		kind, p, _ := strings.Cut(op, " ")
		for _, d := range m.StateDirs {
			if r, err := filepath.Rel(d, p); err == nil && !strings.HasPrefix(r, "..") && openclaw.IsCredentialPath(filepath.ToSlash(r)) &&
				!openclaw.AuditException(r, kind == "readdir") {
				t.Errorf("ingest touched credential path: %s", op)
			}
		}
	}
	if rep.LinesIngested != int64(m.Lines) || rep.MalformedLines != int64(m.MalformedLines) || rep.PendingTails != m.PendingTails {
		t.Fatalf("report %+v; want %d lines, %d malformed, %d pending", rep, m.Lines, m.MalformedLines, m.PendingTails)
	}
	got := l.exported(false)
	for p, want := range m.Exported {
		if !bytes.Equal(got[p], want) {
			t.Errorf("%s: export differs (%d bytes, want %d)", p, len(got[p]), len(want))
		}
	}
	if len(got) != len(m.Exported) {
		for p := range got {
			if _, ok := m.Exported[p]; !ok {
				t.Errorf("exported a file that is not a transcript or run log: %s", p)
			}
		}
	}
	// the corrupt index and the hostile files are warnings, not failures
	var warned []string
	for _, w := range rep.Warnings {
		warned = append(warned, w.Path)
	}
	for _, p := range []string{"agents/broken/sessions/sessions.json", "agents/main/sessions/dir.jsonl", "agents/main/sessions/loop.jsonl"} {
		if !strings.Contains(strings.Join(warned, " "), p) {
			t.Errorf("no warning for %s: %v", p, warned)
		}
	}
	// a second run over the unchanged tree stores nothing and reads nothing
	again := l.run(m.StateDirs...)
	if again.LinesIngested != 0 || again.FilesIngested != 0 || again.BytesRead != 0 || again.MalformedLines != 0 {
		t.Fatalf("second run: %+v", again)
	}
}

func TestIncremental(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	rel := "agents/main/sessions/s1.jsonl"
	path := filepath.Join(dir, rel)
	write := func(s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	header := `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n"
	user := func(id, parent, text string) string {
		return `{"type":"message","id":"` + id + `","parentId":` + parent + `,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	l := newLedger(t)

	write(header + user("u1", "null", "one"))
	if r := l.run(dir); r.LinesIngested != 2 {
		t.Fatalf("first run stored %d lines", r.LinesIngested)
	}
	l.mustMirror(dir, rel)

	// an append: only the new line is read and stored
	testenv.AppendFile(t, path, user("u2", `"u1"`, "two"))
	r := l.run(dir)
	if r.LinesIngested != 1 || r.FilesReplaced != 0 || r.BytesRead != int64(len(user("u2", `"u1"`, "two"))) {
		t.Fatalf("append: %+v", r)
	}
	l.mustMirror(dir, rel)

	// a partial line is held back until its newline arrives
	third := user("u3", `"u2"`, "three")
	testenv.AppendFile(t, path, third[:20])
	r = l.run(dir)
	if r.LinesIngested != 0 || r.PendingTails != 1 || r.PendingBytes != 20 {
		t.Fatalf("partial: %+v", r)
	}
	testenv.AppendFile(t, path, third[20:])
	r = l.run(dir)
	if r.LinesIngested != 1 || r.PendingTails != 0 {
		t.Fatalf("completed: %+v", r)
	}
	l.mustMirror(dir, rel)

	// nothing changed: nothing read
	if r = l.run(dir); r.BytesRead != 0 || r.LinesIngested != 0 {
		t.Fatalf("no-op: %+v", r)
	}

	// truncated to something smaller (a repair dropped a line): re-read, replaced
	write(header + user("u1", "null", "one") + user("u3", `"u1"`, "three"))
	r = l.run(dir)
	if r.FilesReplaced != 1 || r.LinesIngested != 3 {
		t.Fatalf("shrink: %+v", r)
	}
	l.mustMirror(dir, rel)

	// replaced in place by a different file of the same size
	data, _ := os.ReadFile(path)
	write(strings.Replace(string(data), `"one"`, `"eno"`, 1))
	r = l.run(dir)
	if r.FilesReplaced != 1 {
		t.Fatalf("rewrite in place: %+v", r)
	}
	l.mustMirror(dir, rel)

	// replaced by a new file (temp + rename, new inode) that keeps the head
	// and tail but changes the middle
	data, _ = os.ReadFile(path)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Replace(string(data), `"u1"`, `"u9"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	r = l.run(dir)
	if r.FilesReplaced != 1 {
		t.Fatalf("replaced file: %+v", r)
	}
	l.mustMirror(dir, rel)

	// truncated to zero by the writer, then rewritten
	write("")
	r = l.run(dir)
	if got := l.exported(false)[".openclaw/"+rel]; r.FilesReplaced != 1 || len(got) != 0 {
		t.Fatalf("truncated to zero: ledger still holds %q (%+v)", got, r)
	}
	write(header)
	l.run(dir)
	l.mustMirror(dir, rel)

	// soft delete: renamed to .deleted.<ts>; its lines move with it, none re-read
	deleted := rel + ".deleted.2026-01-02T00-00-00.000Z"
	if err := os.Rename(path, filepath.Join(dir, deleted)); err != nil {
		t.Fatal(err)
	}
	r = l.run(dir)
	if r.FilesRenamed != 1 || r.LinesIngested != 0 || r.BytesRead != 0 {
		t.Fatalf("soft delete: %+v", r)
	}
	l.mustMirror(dir, deleted)
	list, err := l.db.Sessions(context.Background(), clawledger.SessionFilter{IncludeDeleted: true})
	if err != nil || len(list) != 1 || list[0].Class != clawledger.ClassDeleted {
		t.Fatalf("sessions after soft delete: %v %v", list, err)
	}

	// hard delete: the file is gone; its lines stay, flagged, out of export
	if err := os.Remove(filepath.Join(dir, deleted)); err != nil {
		t.Fatal(err)
	}
	r = l.run(dir)
	if r.FilesGone != 1 {
		t.Fatalf("deletion: %+v", r)
	}
	if len(l.exported(false)) != 0 || len(l.exported(true)) != 1 {
		t.Fatalf("gone file: export %d, with gone %d", len(l.exported(false)), len(l.exported(true)))
	}
	list, _ = l.db.Sessions(context.Background(), clawledger.SessionFilter{IncludeDeleted: true})
	if len(list) != 1 || !list[0].Gone {
		t.Fatalf("gone session: %+v", list)
	}
	if list, _ = l.db.Sessions(context.Background(), clawledger.SessionFilter{}); len(list) != 0 {
		t.Fatalf("gone sessions listed by default: %d", len(list))
	}
}

// TestChunkedCommits ingests a file in many intermediate commits and
// checks it still lands whole, once.
func TestChunkedCommits(t *testing.T) {
	home := t.TempDir()
	rep, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 2 << 20, Files: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	l.c.ChunkBytes = 64 << 10
	r := l.run(rep.StateDir)
	if r.LinesIngested != rep.Lines {
		t.Fatalf("stored %d lines, want %d", r.LinesIngested, rep.Lines)
	}
	if r = l.run(rep.StateDir); r.LinesIngested != 0 {
		t.Fatalf("second run stored %d lines", r.LinesIngested)
	}
}

// TestIncrementalEqualsFull: a transcript ingested a few lines at a time
// (with a partial line now and then) derives exactly the session a single
// full read derives.
func TestIncrementalEqualsFull(t *testing.T) {
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	full := newLedger(t)
	full.run(m.StateDirs...)
	want := sessionsByPath(t, full)

	steps := newLedger(t)
	dir := filepath.Join(t.TempDir(), ".openclaw")
	for _, p := range m.ExportedPaths() {
		if !strings.HasPrefix(p, ".openclaw/agents/main/sessions/") {
			continue
		}
		data := m.Exported[p]
		rel := strings.TrimPrefix(p, ".openclaw/")
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(dst)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(data); {
			n := min(len(data)-i, 1+(i*7919)%997) // uneven pieces, often mid-line
			if _, err := f.Write(data[i : i+n]); err != nil {
				t.Fatal(err)
			}
			i += n
			steps.run(dir)
		}
		f.Close()
	}
	steps.run(dir)
	got := sessionsByPath(t, steps)
	for path, w := range want {
		if !strings.HasPrefix(path, ".openclaw/agents/main/sessions/") {
			continue
		}
		g, ok := got[path]
		if !ok {
			t.Errorf("%s: missing", path)
			continue
		}
		g.SourceID, w.SourceID, g.StateDir, w.StateDir = 0, 0, "", ""
		g.Index, w.Index, g.Key, w.Key = nil, nil, "", ""
		if gj, wj := fmt.Sprintf("%+v", *g), fmt.Sprintf("%+v", *w); gj != wj {
			t.Errorf("%s:\nincremental %s\nfull        %s", path, gj, wj)
		}
	}
}

func sessionsByPath(t *testing.T, l *ledger) map[string]*clawledger.Session {
	t.Helper()
	list, err := l.db.Sessions(context.Background(), clawledger.SessionFilter{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*clawledger.Session{}
	for _, s := range list {
		out[filepath.Base(s.StateDir)+"/"+s.Path] = s
	}
	return out
}

// countingStore counts how often a run loads every source of a state dir.
type countingStore struct {
	*sqlite.DB
	loads    int
	ensured  int // sources registered one at a time
	ensuredN int // sources registered at once
}

func (s *countingStore) EnsureSource(ctx context.Context, src *clawledger.Source) (*clawledger.Source, error) {
	s.ensured++
	return s.DB.EnsureSource(ctx, src)
}

func (s *countingStore) EnsureSources(ctx context.Context, srcs []*clawledger.Source) ([]*clawledger.Source, error) {
	s.ensuredN += len(srcs)
	return s.DB.EnsureSources(ctx, srcs)
}

// TestSourcesRegisteredAtOnce: a first ingest registers its files' sources
// in one call of a store that can (not a statement or two per file), in
// the order they are read, and stores every line under its own.
func TestSourcesRegisteredAtOnce(t *testing.T) {
	home := t.TempDir()
	large, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 256 << 10, Files: 12, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	store := &countingStore{DB: l.db}
	l.c.Store = store
	rep := l.run(large.StateDir)
	if store.ensured != 0 || store.ensuredN < 12 {
		t.Fatalf("%d sources registered one at a time, %d at once; want none and every file's", store.ensured, store.ensuredN)
	}
	if rep.LinesIngested != large.Lines {
		t.Fatalf("%d lines ingested of %d", rep.LinesIngested, large.Lines)
	}
	got := l.exported(false)
	if len(got) < 12 {
		t.Fatalf("%d files exported, want 12", len(got))
	}
	for rel, b := range got {
		want, err := os.ReadFile(filepath.Join(large.StateDir, filepath.FromSlash(strings.TrimPrefix(rel, filepath.Base(large.StateDir)+"/"))))
		if err != nil || !bytes.Equal(b, want) {
			t.Fatalf("%s: the ledger holds %d bytes, the file %d (%v)", rel, len(b), len(want), err)
		}
	}
}

func (s *countingStore) Sources(ctx context.Context, id int64) ([]*clawledger.Source, error) {
	s.loads++
	return s.DB.Sources(ctx, id)
}

// TestUnchangedTreeLoadsNothing: a run over a tree the ledger holds as it
// is loads no source (the files' digest matches the last complete run's);
// any change to a file, and any change to a source (a reset by doctor
// --fix), sends the next run through every cursor again.
func TestUnchangedTreeLoadsNothing(t *testing.T) {
	home := t.TempDir()
	large, err := fixture.WriteLarge(home, fixture.LargeOptions{TotalBytes: 256 << 10, Files: 6, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	store := &countingStore{DB: l.db}
	l.c.Store = store
	run := func(wantLoads int, wantLines int64) {
		t.Helper()
		store.loads = 0
		rep := l.run(large.StateDir)
		if store.loads != wantLoads || rep.LinesIngested != wantLines {
			t.Fatalf("run loaded the sources %d times and stored %d lines; want %d and %d", store.loads, rep.LinesIngested, wantLoads, wantLines)
		}
	}
	run(1, large.Lines)
	run(0, 0)
	var path string
	filepath.WalkDir(large.StateDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && path == "" && filepath.Ext(p) == ".jsonl" {
			path = p
		}
		return err
	})
	testenv.AppendFile(t, path, `{"type":"custom","customType":"x","data":{}}`+"\n")
	run(1, 1)
	run(0, 0)
	srcs, err := l.db.AllSources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.db.ResetSource(context.Background(), srcs[0]); err != nil {
		t.Fatal(err)
	}
	run(1, srcs[0].Cursor.Lines)
	run(0, 0)
	// a file that could not be read leaves no digest behind
	l.c.FS = &failingFS{FS: openclaw.OS, path: path, after: 0}
	if err := os.Chtimes(path, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	run(1, 0)
	l.c.FS = openclaw.OS
	run(1, 0)
	run(0, 0)
}

// TestNoopRecordsScan: a run that finds nothing to do still records that
// the ledger is current with the dir (status's last scan).
func TestNoopRecordsScan(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if err := fixture.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	l.run(dir)
	lastScan := func() int64 {
		st, err := l.db.Status(context.Background(), 0)
		if err != nil || len(st.StateDirs) != 1 {
			t.Fatalf("status: %v %+v", err, st)
		}
		return st.StateDirs[0].LastScan
	}
	first := lastScan()
	for time.Now().UnixMilli() <= first { // the clock must move on for the check to mean anything
	}
	for i := range 2 {
		if r := l.run(dir); r.LinesIngested != 0 || r.FilesIngested != 0 {
			t.Fatalf("run %d: %+v", i+2, r)
		}
		if got := lastScan(); got <= first {
			t.Fatalf("run %d: last scan %d, not after %d", i+2, got, first)
		}
	}
}

// TestRereadCountsUsageOnce: an assistant message kept in a live transcript
// and in its older reset archive counts once, and still once after the live
// file is read again from scratch (rewritten in place, or reset by doctor
// --fix), whether lines without usage follow it or not: the lines read
// again may take the ids of the deleted ones.
func TestRereadCountsUsageOnce(t *testing.T) {
	const (
		header = `{"type":"session","version":3,"id":"s1","timestamp":"2024-03-14T10:00:00.000Z","cwd":"/w"}` + "\n"
		user   = `{"type":"message","id":"u1","parentId":null,"timestamp":1710410000000,"message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1710410000000}}` + "\n"
		answer = `{"type":"message","id":"a1","parentId":"u1","timestamp":1710410001000,"message":{"role":"assistant","content":[{"type":"text","text":"sure"}],"usage":{"input":5,"output":1},"timestamp":1710410001000}}` + "\n"
		thanks = `{"type":"message","id":"u2","parentId":"a1","timestamp":1710410002000,"message":{"role":"user","content":[{"type":"text","text":"thanks"}],"timestamp":1710410002000}}` + "\n"
	)
	write := func(t *testing.T, path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// rewrite changes the live file's header in place
	rewrite := func(t *testing.T, _ *ledger, live string) {
		t.Helper()
		data, err := os.ReadFile(live)
		if err != nil {
			t.Fatal(err)
		}
		write(t, live, strings.Replace(string(data), `"cwd":"/w"`, `"cwd":"/x"`, 1))
	}
	// reset deletes the live file's lines, as doctor --fix does
	reset := func(t *testing.T, l *ledger, live string) {
		t.Helper()
		ctx := context.Background()
		srcs, err := l.db.AllSources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range srcs {
			if filepath.Base(s.Rel) == filepath.Base(live) {
				if err := l.db.ResetSource(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, tc := range []struct {
		name   string
		tail   string // the live file's lines after the answer
		reread func(t *testing.T, l *ledger, live string)
	}{
		{"rewritten, answer last", "", rewrite},
		{"rewritten, user message last", thanks, rewrite},
		{"rewritten, user message and custom entry last", thanks + `{"type":"custom","customType":"x","data":{}}` + "\n", rewrite},
		{"reset, answer last", "", reset},
		{"reset, user message last", thanks, reset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ".openclaw")
			sessions := filepath.Join(dir, "agents", "main", "sessions")
			if err := os.MkdirAll(sessions, 0o755); err != nil {
				t.Fatal(err)
			}
			archive, live := filepath.Join(sessions, "s1.jsonl.reset.2024-03-14T11-00-00.000Z"), filepath.Join(sessions, "s1.jsonl")
			write(t, archive, header+user+answer)
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(archive, old, old); err != nil { // read first
				t.Fatal(err)
			}
			write(t, live, header+user+answer+tc.tail)
			l := newLedger(t)
			counted := func(when string) {
				t.Helper()
				groups, err := l.db.Usage(context.Background(), clawledger.UsageFilter{})
				if err != nil {
					t.Fatal(err)
				}
				var input, messages int64
				for _, g := range groups {
					input, messages = input+g.Input, messages+g.Messages
				}
				if input != 5 || messages != 1 {
					t.Fatalf("%s: %d messages, input %d; want the answer counted once (1, 5)", when, messages, input)
				}
			}
			l.run(dir)
			counted("first ingest")
			tc.reread(t, l, live)
			lines := int64(strings.Count(header+user+answer+tc.tail, "\n"))
			if r := l.run(dir); r.LinesIngested != lines {
				t.Fatalf("the live file was not read again: %+v", r)
			}
			counted("after the re-read")
		})
	}
}

// statSignal is the real file system, without OpenDir (so Scan stats every
// file by its path), closing statted once the file named target is stat'ed.
type statSignal struct {
	openclaw.FS
	target  string
	once    sync.Once
	statted chan struct{}
}

func (s *statSignal) Lstat(name string) (fs.FileInfo, error) {
	fi, err := s.FS.Lstat(name)
	if filepath.Base(name) == s.target {
		s.once.Do(func() { close(s.statted) })
	}
	return fi, err
}

// TestPrescan: a run goes by a scan taken before the ledger was open
// (collect.Prescan) as by its own: a change after a file was scanned is the
// next run's, and a ledger that another writer brought further in between
// reads nothing again. A prescan older than a second (the ledger waited
// for another writer) is scanned again.
func TestPrescan(t *testing.T) {
	const (
		header = `{"type":"session","version":3,"id":"s1","timestamp":"2024-03-14T10:00:00.000Z","cwd":"/w"}` + "\n"
		user   = `{"type":"message","id":"u1","parentId":null,"timestamp":1710410000000,"message":{"role":"user","content":"hi","timestamp":1710410000000}}` + "\n"
		more   = `{"type":"message","id":"u2","parentId":"u1","timestamp":1710410002000,"message":{"role":"user","content":"more","timestamp":1710410002000}}` + "\n"
		name   = "s1.jsonl"
	)
	appendMore := func(t *testing.T, path string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(more); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		between   func(t *testing.T, l *ledger, dir, path string) // after the prescan, before the run
		age       time.Duration                                   // of the prescan when the run starts
		wantLines int64
	}{
		{"nothing changed", func(*testing.T, *ledger, string, string) {}, 0, 0},
		{"appended after the prescan", func(t *testing.T, _ *ledger, _, path string) { appendMore(t, path) }, 0, 0},
		{"appended after an old prescan", func(t *testing.T, _ *ledger, _, path string) { appendMore(t, path) }, 2 * time.Second, 1},
		{"appended and ingested by another writer after the prescan", func(t *testing.T, l *ledger, dir, path string) {
			appendMore(t, path)
			if r := l.run(dir); r.LinesIngested != 1 {
				t.Fatalf("the other writer: %+v", r)
			}
		}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ".openclaw")
			path := filepath.Join(dir, "agents", "main", "sessions", name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(header+user), 0o644); err != nil {
				t.Fatal(err)
			}
			l := newLedger(t)
			l.run(dir)
			fsys := &statSignal{FS: openclaw.OS, target: name, statted: make(chan struct{})}
			now := time.Now()
			c := &collect.Collector{FS: fsys, Now: func() time.Time { return now }}
			c.Prescan([]string{dir})
			now = now.Add(tc.age)
			<-fsys.statted
			tc.between(t, l, dir, path)
			c.Store = l.db
			rep, err := c.Run(context.Background(), []string{dir})
			if err != nil {
				t.Fatal(err)
			}
			if rep.LinesIngested != tc.wantLines || rep.FilesReplaced != 0 || rep.FilesScanned != 1 {
				t.Errorf("run: %d lines, %d files re-read, %d scanned; want %d, 0, 1", rep.LinesIngested, rep.FilesReplaced, rep.FilesScanned, tc.wantLines)
			}
			l.run(dir) // the next run has every line, once
			l.mustMirror(dir, "agents/main/sessions/"+name)
		})
	}
}

// TestPrescanThenRun: Run right after Prescan, as ingest does (the scans
// still running), with the default file system: the run is complete, and
// `go test -race` finds the two never write what the scans read.
func TestPrescanThenRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if err := fixture.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	want := newLedger(t).run(dir)
	l := newLedger(t)
	c := &collect.Collector{}
	c.Prescan([]string{dir})
	c.Store = l.db
	got, err := c.Run(context.Background(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if got.FilesScanned != want.FilesScanned || got.LinesIngested != want.LinesIngested {
		t.Errorf("after a prescan: %d files, %d lines; without: %d files, %d lines", got.FilesScanned, got.LinesIngested, want.FilesScanned, want.LinesIngested)
	}
}

// TestBrokenCronJobsWarnEveryRun: a cron/jobs.json that does not parse is
// reported by every run until it is mended, not once: its cursor (and so
// the no-op digest) never claims a file the ledger could not take in.
func TestBrokenCronJobsWarnEveryRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if err := fixture.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "cron"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cron", "jobs.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	for i := range 3 {
		rep := l.run(dir)
		warned := false
		for _, w := range rep.Warnings {
			warned = warned || w.Path == "cron/jobs.json"
		}
		if !warned {
			t.Errorf("run %d: no warning about cron/jobs.json: %+v", i+1, rep.Warnings)
		}
	}
}
