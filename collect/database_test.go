package collect_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawledger/clawledger/internal/sqlitedriver"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/openclaw/archive"
	"github.com/clawledger/clawledger/sqlite"
)

type eraLedger struct {
	t   *testing.T
	db  *sqlite.DB
	raw *sql.DB
}

func openLedger(t *testing.T) *eraLedger {
	t.Helper()
	return openLedgerAt(t, filepath.Join(t.TempDir(), "ledger.db"))
}

// openLedgerAt opens a new ledger at path.
func openLedgerAt(t *testing.T, path string) *eraLedger {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close(); db.Close() })
	return &eraLedger{t: t, db: db, raw: raw}
}

func (l *eraLedger) ingest(dir string) *collect.Report {
	l.t.Helper()
	c := &collect.Collector{Store: l.db, FS: openclaw.OS}
	rep, err := c.Run(context.Background(), []string{dir})
	if err != nil {
		l.t.Fatal(err)
	}
	for _, w := range rep.Warnings {
		l.t.Errorf("warning: %s: %s", w.Path, w.Message)
	}
	return rep
}

// lines returns the stored lines of the source at rel, in offset order.
func (l *eraLedger) lines(rel string) []string {
	l.t.Helper()
	rows, err := l.raw.Query(`SELECT l.raw FROM lines l JOIN sources s ON s.id = l.source_id WHERE s.rel_path = ? ORDER BY l.offset`, rel)
	if err != nil {
		l.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			l.t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func (l *eraLedger) count(q string, args ...any) int64 {
	l.t.Helper()
	var n int64
	if err := l.raw.QueryRow(q, args...).Scan(&n); err != nil {
		l.t.Fatalf("%s: %v", q, err)
	}
	return n
}

func dbRel(agent, session string) string {
	return openclaw.DatabaseSourceRel(openclaw.AgentDatabaseRel(agent), session)
}

// sourceRel is where the ledger keeps a fixture session.
func sourceRel(s *fixture.EraSession) string {
	if s.Class == "deleted" || s.Class == "reset" {
		rel := s.Export
		if s.ID == fixture.EraPrevious || s.ID == fixture.EraFileOnly {
			rel += ".zst"
		}
		return rel
	}
	return dbRel(s.Agent, s.ID)
}

func TestSQLiteEraFixture(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	m, err := fixture.WriteSQLiteEra(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := listFiles(t, dir)
	l := openLedger(t)
	rep := l.ingest(dir)

	for _, s := range m.Sessions {
		got := l.lines(sourceRel(s))
		if strings.Join(got, "\n") != strings.Join(s.Events, "\n") {
			t.Errorf("%s (%s): stored %d lines, want its %d events in seq order", s.ID, s.Purpose, len(got), len(s.Events))
		}
		var class string
		if err := l.raw.QueryRow(`SELECT class FROM sources WHERE rel_path = ?`, sourceRel(s)).Scan(&class); err != nil || class != s.Class {
			t.Errorf("%s: class %q (%v), want %q", s.ID, class, err, s.Class)
		}
	}
	if n := l.count(`SELECT count(*) FROM sources WHERE kind = 'transcript' AND class <> 'migrated'`); n != int64(len(m.Sessions)) {
		t.Errorf("%d transcripts stored, want %d (each archive once, row and file alike)", n, len(m.Sessions))
	}
	// the .migrated leftover keeps its lines, but the session is listed once
	if got := l.lines("agents/main/sessions/" + fixture.EraLive + ".jsonl.migrated"); len(got) == 0 {
		t.Error("the .migrated file's lines were not kept")
	}
	ctx := context.Background()
	sessions, err := l.db.Sessions(ctx, clawledger.SessionFilter{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, s := range sessions {
		seen[s.SessionID]++
		if want := m.Session(s.SessionID); want != nil && want.Key != "" && s.Key != want.Key {
			t.Errorf("%s: key %q, want %q", s.SessionID, s.Key, want.Key)
		}
	}
	for _, s := range m.Sessions {
		if seen[s.ID] != 1 {
			t.Errorf("session %s (%s) listed %d times, want once", s.ID, s.Purpose, seen[s.ID])
		}
	}
	// usage: the migrated copy and the fork's shared entries count once
	if n := l.count(`SELECT count(*) - count(DISTINCT usage_key) FROM messages m JOIN sources s ON s.id = m.source_id
		WHERE usage_key IS NOT NULL AND s.class = 'migrated'`); n != 0 {
		t.Errorf("%d usage keys of the .migrated file are not shared with the database", n)
	}
	if n := l.count(`SELECT count(*) FROM messages m JOIN sources s ON s.id = m.source_id WHERE s.class = 'migrated'
		AND usage_key NOT IN (SELECT usage_key FROM messages m2 JOIN sources s2 ON s2.id = m2.source_id
		WHERE s2.rel_path = ? AND usage_key IS NOT NULL)`, dbRel("main", fixture.EraLive)); n != 0 {
		t.Errorf("%d usage keys of the .migrated file are not those of the database session", n)
	}
	if n := l.count(`SELECT count(*) FROM cron_jobs`); n != int64(m.CronJobs) {
		t.Errorf("%d cron jobs, want %d", n, m.CronJobs)
	}
	if n := l.count(`SELECT count(*) FROM cron_runs`); n != int64(m.CronRuns) {
		t.Errorf("%d cron runs, want %d (finished runs only)", n, m.CronRuns)
	}
	if n := l.count(`SELECT count(*) FROM cron_runs WHERE job_id = 'job-digest' AND status = 'ok' AND input_tokens = 1000 AND session_id = ?`, fixture.EraLive); n != 1 {
		t.Error("the digest run's detail (status, usage, session) was not kept")
	}
	if n := l.count(`SELECT count(*) FROM cron_runs WHERE status = 'interrupted' AND error = 'gateway restarted'`); n != 1 {
		t.Error("the interrupted run (a receipt without a task row) is missing")
	}
	// never a credential, never a file beside the databases
	if n := l.count(`SELECT count(*) FROM lines WHERE instr(raw, ?) > 0`, m.Secret); n != 0 {
		t.Error("the credential table was read")
	}
	if after := listFiles(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("files changed beside the databases:\nbefore %v\nafter  %v", before, after)
	}
	if rep.MalformedLines != 0 {
		t.Errorf("%d malformed lines", rep.MalformedLines)
	}

	// a second run over the same tree reads nothing
	rep = l.ingest(dir)
	if rep.LinesIngested != 0 || rep.FilesIngested != 0 || rep.BytesRead != 0 {
		t.Errorf("no-op run: %+v", rep)
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			out = append(out, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
		}
		return nil
	})
	return out
}

func openMain(t *testing.T, dir string) *fixture.EraDB {
	t.Helper()
	db, err := fixture.OpenEraDB(filepath.Join(dir, filepath.FromSlash(openclaw.AgentDatabaseRel("main"))), "")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSQLiteEraIncremental(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	m, err := fixture.WriteSQLiteEra(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := openLedger(t)
	l.ingest(dir)
	rel := dbRel("main", fixture.EraLive)
	lineIDs := func() string {
		var s string
		l.raw.QueryRow(`SELECT group_concat(l.id) FROM lines l JOIN sources s ON s.id = l.source_id WHERE s.rel_path = ?`, rel).Scan(&s)
		return s
	}
	kept := lineIDs()

	// new rows only: the stored lines stay, two more are appended
	db := openMain(t, dir)
	extra := []string{
		`{"type":"message","id":"added01","parentId":null,"timestamp":1710410000000,"message":{"role":"user","content":"one more","timestamp":1710410000000}}`,
		`{"type":"message","id":"added02","parentId":"added01","timestamp":1710410001000,"message":{"role":"assistant","content":[{"type":"text","text":"sure"}],"usage":{"input":5,"output":1},"timestamp":1710410001000}}`,
	}
	for i, ev := range extra {
		if _, err := db.AppendEvent(fixture.EraLive, ev, i == 1); err != nil {
			t.Fatal(err)
		}
	}
	rep := l.ingest(dir)
	if rep.LinesIngested != 2 || rep.DBSourcesReplaced != 0 {
		t.Errorf("append: %d lines, %d replaced; want 2 new lines and no re-read", rep.LinesIngested, rep.DBSourcesReplaced)
	}
	if got := lineIDs(); !strings.HasPrefix(got, kept+",") {
		t.Error("appending re-wrote the lines already stored")
	}
	want := append(append([]string{}, m.Session(fixture.EraLive).Events...), extra...)
	if got := l.lines(rel); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after append: %d lines, want %d", len(got), len(want))
	}

	// a rewind in place (rows after seq 1 replaced, a new generation): re-read and replaced
	rewound := []string{
		`{"type":"message","id":"rewound1","parentId":null,"timestamp":1710420000000,"message":{"role":"user","content":"take two","timestamp":1710420000000}}`,
		`{"type":"message","id":"rewound2","parentId":"rewound1","timestamp":1710420001000,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input":7,"output":2},"timestamp":1710420001000}}`,
	}
	rw := m.Session(fixture.EraRewound)
	if err := db.Rewrite(fixture.EraRewound, 1, "gen-rewound-2", rewound); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rep = l.ingest(dir)
	if rep.DBSourcesReplaced != 1 || rep.FilesReplaced != 0 {
		t.Errorf("rewind: %d database sources replaced (%d files), want 1 (and no file)", rep.DBSourcesReplaced, rep.FilesReplaced)
	}
	want = append(append([]string{}, rw.Events[:2]...), rewound...)
	if got := l.lines(dbRel("main", fixture.EraRewound)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after rewind: %q\nwant %q", got, want)
	}
	if n := l.count(`SELECT count(*) FROM messages m JOIN sources s ON s.id = m.source_id WHERE s.rel_path = ?`, dbRel("main", fixture.EraRewound)); n != 3 {
		t.Errorf("after rewind: %d messages derived, want 3 (the kept user message and the two new ones)", n)
	}

	// a session deleted from the database keeps its lines, flagged gone
	db = openMain(t, dir)
	if _, err := db.Exec(`DELETE FROM transcript_events WHERE session_id = ?`, fixture.EraFork); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rep = l.ingest(dir)
	if rep.FilesGone != 1 || l.count(`SELECT gone_at_ms <> 0 FROM sources WHERE rel_path = ?`, dbRel("main", fixture.EraFork)) != 1 {
		t.Errorf("a vanished session is not flagged gone (%d gone)", rep.FilesGone)
	}
	if len(l.lines(dbRel("main", fixture.EraFork))) == 0 {
		t.Error("a vanished session lost its lines")
	}
}

// TestSQLiteEraConcurrentWriter ingests while another connection keeps
// appending events (OpenClaw at work) and ends with every row exactly once.
func TestSQLiteEraConcurrentWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	db := openMain(t, dir)
	l := openLedger(t)
	const n = 300
	var wg sync.WaitGroup
	wg.Add(1)
	errc := make(chan error, 1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			ev := fmt.Sprintf(`{"type":"message","id":"c%07d","parentId":null,"timestamp":%d,"message":{"role":"user","content":"event %d","timestamp":%d}}`, i, 1710500000000+i, i, 1710500000000+i)
			if _, err := db.AppendEvent(fixture.EraLive, ev, i%4 == 0); err != nil {
				errc <- err
				return
			}
			if _, err := db.AppendEvent("concurrent-new", ev, i%3 == 0); err != nil {
				errc <- err
				return
			}
		}
	}()
	runs := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; runs++ {
		select {
		case <-done:
			running = false
		default:
		}
		l.ingest(dir)
	}
	db.Close()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	l.ingest(dir)
	check, err := fixture.OpenEraDB(filepath.Join(dir, filepath.FromSlash(openclaw.AgentDatabaseRel("main"))), "")
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	for _, sid := range []string{fixture.EraLive, "concurrent-new"} {
		rows, err := check.Query(`SELECT coalesce(event_json, event_zstd) FROM transcript_events WHERE session_id = ? ORDER BY seq`, sid)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for rows.Next() {
			var b []byte
			rows.Scan(&b)
			if bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
				b = decompress(t, b)
			}
			want = append(want, string(b))
		}
		rows.Close()
		got := l.lines(dbRel("main", sid))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d lines stored, database has %d events", sid, len(got), len(want))
		}
		if dup := l.count(`SELECT count(*) - count(DISTINCT l.raw) FROM lines l JOIN sources s ON s.id = l.source_id WHERE s.rel_path = ?`, dbRel("main", sid)); dup != 0 {
			t.Errorf("%s: %d duplicate lines", sid, dup)
		}
	}
	t.Logf("%d ingest runs while %d events were appended", runs, 2*n)
}

func decompress(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := archive.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cronState writes cron runs into a fixture's state database the way
// OpenClaw does: a receipt per run, and a task row naming it in its run id.
type cronState struct {
	t  *testing.T
	db *fixture.EraDB
}

func (s *cronState) exec(q string, args ...any) {
	s.t.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		s.t.Fatal(err)
	}
}

// receipt claims a run's receipt (still running).
func (s *cronState) receipt(id string, started int64) {
	s.exec(`INSERT INTO cron_run_receipts(receipt_id, store_key, job_id, config_revision, agent_id, status, owner_pid, started_at_ms)
		VALUES(?, 'store', 'job-digest', 'rev', 'main', 'running', 42, ?)`, id, started)
}

func (s *cronState) finishReceipt(id, status string, finished int64) {
	s.exec(`UPDATE cron_run_receipts SET status = ?, finished_at_ms = ? WHERE receipt_id = ?`, status, finished, id)
}

// task writes a run's task row: running while outcome is "", else ended
// at ended with that outcome ("lost": ended without one).
func (s *cronState) task(id, receipt, outcome string, started, ended int64) {
	status, detail := "running", `{"kind":"cron-run","runAtMs":%d}`
	switch outcome {
	case "ok":
		status, detail = "succeeded", `{"kind":"cron-run","status":"ok","runAtMs":%d,"usage":{"input_tokens":70,"output_tokens":7}}`
	case "lost":
		status = "lost"
	}
	var end any
	if outcome != "" {
		end = ended
	}
	s.exec(`INSERT INTO task_runs(task_id, runtime, task_kind, source_id, owner_key, scope_kind, agent_id, run_id, task, status,
		delivery_status, notify_policy, created_at, started_at, ended_at, detail_json)
		VALUES(?, 'cron', 'automation_run', 'job-digest', '', 'system', 'main', ?, 'job', ?, 'not_applicable', 'silent', ?, ?, ?, ?)
		ON CONFLICT(task_id) DO UPDATE SET status = excluded.status, ended_at = excluded.ended_at, detail_json = excluded.detail_json`,
		id, fmt.Sprintf("cron:job-digest:%d:%s", started, receipt), status, started, started, end, fmt.Sprintf(detail, started))
}

// A run's receipt and its task row finish in separate writes, in either
// order, and either may be read before the other: each run is stored once,
// from its task row when it has a finished one.
func TestCronRunStoredOnceAcrossItsWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	db, err := fixture.OpenEraDB(filepath.Join(dir, "state", "openclaw.sqlite"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := &cronState{t: t, db: db}
	l := openLedger(t)
	l.ingest(dir)
	runs := func() int64 { return l.count(`SELECT count(*) FROM cron_runs WHERE job_id = 'job-digest'`) }
	stored := runs() // the fixture's two
	step := func(what string, want int64) {
		t.Helper()
		l.ingest(dir)
		n := runs()
		if n-stored != want {
			t.Errorf("%s: %d runs stored, want %d", what, n-stored, want)
		}
		stored = n
	}
	t0 := fixture.Base.UnixMilli() + 20_000_000

	// the receipt finishes, then its task row is written (finished, later)
	s.receipt("rcpt-a", t0)
	step("a: receipt running", 0)
	s.finishReceipt("rcpt-a", "ok", t0+1000)
	step("a: receipt finished, no task row yet", 1)
	s.task("task-a", "rcpt-a", "ok", t0, t0+1500)
	step("a: its task row finished after the receipt was stored", 0)

	// the receipt finishes while its task row still runs
	t1 := t0 + 60_000
	s.receipt("rcpt-b", t1)
	s.task("task-b", "rcpt-b", "", t1, 0)
	step("b: both running", 0)
	s.finishReceipt("rcpt-b", "ok", t1+1000)
	step("b: receipt finished, task row running", 0)
	s.task("task-b", "rcpt-b", "ok", t1, t1+1500)
	step("b: task row finished", 1)
	if n := l.count(`SELECT count(*) FROM cron_runs WHERE job_id = 'job-digest' AND input_tokens = 70 AND run_at_ms = ?`, t1); n != 1 {
		t.Error("b: the run was not stored from its task row (usage)")
	}

	// the task row finishes first; later OpenClaw prunes it and keeps the receipt
	t2 := t1 + 60_000
	s.receipt("rcpt-c", t2)
	s.task("task-c", "rcpt-c", "ok", t2, t2+1500)
	step("c: task row finished, receipt running", 1)
	s.finishReceipt("rcpt-c", "ok", t2+1600)
	step("c: receipt finished", 0)
	s.exec(`DELETE FROM task_runs WHERE task_id = 'task-c'`)
	step("c: task row pruned", 0)

	// a task row that ended without an outcome: its receipt tells the run
	t3 := t2 + 60_000
	s.receipt("rcpt-d", t3)
	s.task("task-d", "rcpt-d", "", t3, 0)
	s.finishReceipt("rcpt-d", "interrupted", t3+500)
	step("d: interrupted, task row running", 0)
	s.task("task-d", "rcpt-d", "lost", t3, t3+900)
	step("d: task row lost", 1)

	// a ledger whose mark predates receipts ("<ts>/<id>") stores nothing again
	rel := openclaw.DatabaseSourceRel(openclaw.StateDatabaseRel, openclaw.DatabaseCronRunsPart("job-digest"))
	var mark string
	if err := l.raw.QueryRow(`SELECT mark FROM sources WHERE rel_path = ?`, rel).Scan(&mark); err != nil || !strings.Contains(mark, ";") {
		t.Fatalf("mark %q: %v", mark, err)
	}
	w, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(l.db.Path, "_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	old, _, _ := strings.Cut(mark, ";")
	if _, err := w.Exec(`UPDATE sources SET mark = ? WHERE rel_path = ?`, old, rel); err != nil {
		t.Fatal(err)
	}
	step("an old mark", 0)
}

// TestDatabaseDigest: a state dir with databases that no one wrote to is
// found unchanged by its digest, without opening a database; a write to a
// database (to its WAL or to the file) makes the next run read it; and a
// database written within quietTime of the scan is never taken on trust.
func TestDatabaseDigest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	l := openLedger(t)
	store := &countingStore{DB: l.db}
	now := time.Now()
	c := &collect.Collector{Store: store, FS: openclaw.OS, Now: func() time.Time { return now }}
	run := func(what string, wantLoads int, wantLines int64) *collect.Report { // wantLines -1: any
		t.Helper()
		store.loads = 0
		rep, err := c.Run(context.Background(), []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		if store.loads != wantLoads || wantLines >= 0 && rep.LinesIngested != wantLines || len(rep.Warnings) != 0 {
			t.Errorf("%s: %d cursor loads, %d lines, warnings %v; want %d loads, %d lines", what, store.loads, rep.LinesIngested, rep.Warnings, wantLoads, wantLines)
		}
		return rep
	}
	first := run("first run", 1, -1)
	// the databases were just written: not quiet, so no digest was kept
	run("databases written just now", 1, 0)

	now = now.Add(time.Hour) // every database has been left alone since
	run("first quiet run", 1, 0)
	if rep := run("unchanged", 0, 0); rep.FilesScanned != first.FilesScanned {
		t.Errorf("unchanged: %d files scanned, the first run %d", rep.FilesScanned, first.FilesScanned)
	}

	db := openMain(t, dir)
	if _, err := db.AppendEvent(fixture.EraLive, `{"type":"message","id":"late01","parentId":null,"timestamp":1710410000000,"message":{"role":"user","content":"late","timestamp":1710410000000}}`, false); err != nil {
		t.Fatal(err)
	}
	run("an event appended", 1, 1)
	if err := db.Close(); err != nil { // the last connection checkpoints into the file
		t.Fatal(err)
	}
	run("checkpointed", 1, 0)
	run("unchanged again", 0, 0)
}

// TestDatabaseDigestAfterWarning: a run that warned about a state dir keeps
// no digest of it, so a cold archive file that was missing (nothing in the
// digest changes when it comes back) is read as soon as it is there.
func TestDatabaseDigestAfterWarning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	cold, err := filepath.Glob(filepath.Join(dir, "agents", "main", "sessions", "cold", "*.jsonl.zst"))
	if err != nil || len(cold) != 1 {
		t.Fatalf("cold archives: %v %v", cold, err)
	}
	aside := filepath.Join(t.TempDir(), "aside")
	if err := os.Rename(cold[0], aside); err != nil {
		t.Fatal(err)
	}
	l := openLedger(t)
	store := &countingStore{DB: l.db}
	now := time.Now().Add(time.Hour) // the databases are quiet
	c := &collect.Collector{Store: store, FS: openclaw.OS, Now: func() time.Time { return now }}
	for i := range 2 {
		store.loads = 0
		rep, err := c.Run(context.Background(), []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		if store.loads != 1 || len(rep.Warnings) == 0 {
			t.Fatalf("run %d without the cold archive: %d cursor loads, warnings %v; want 1 load and a warning", i+1, store.loads, rep.Warnings)
		}
	}
	if err := os.Rename(aside, cold[0]); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Run(context.Background(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LinesIngested == 0 || len(rep.Warnings) != 0 {
		t.Errorf("the cold archive back: %d lines, warnings %v; want its lines", rep.LinesIngested, rep.Warnings)
	}
}

// TestDatabaseSessionSizes: a session's new events are stored whole
// whether they fit in memory first (read, then stored without a savepoint)
// or not (streamed into a savepoint), and a later append of either size
// adds only the new events.
func TestDatabaseSessionSizes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	db, err := fixture.OpenEraDB(filepath.Join(dir, filepath.FromSlash(openclaw.AgentDatabaseRel("main"))), fixture.AgentSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rnd := rand.New(rand.NewSource(5))
	big := strings.Repeat("lorem ipsum ", 20_000)       // 240 KB a message
	sessions := map[string]int{"small": 3, "large": 30} // messages: 0.7 MB and 7 MB
	want := map[string][]string{}
	write := func(id string, lines []string) {
		t.Helper()
		for i, ev := range lines {
			if _, err := db.AppendEvent(id, ev, i%2 == 1); err != nil {
				t.Fatal(err)
			}
		}
		want[id] = append(want[id], lines...)
	}
	trs := map[string]*fixture.Transcript{}
	for name, n := range sessions {
		tr := fixture.NewTranscript(rnd, fixture.UUID(rnd), 4, fixture.Base, "/w")
		for range n {
			tr.User(big)
		}
		trs[name] = tr
		write(tr.ID, tr.Lines())
	}
	l := openLedger(t)
	check := func(when string) {
		t.Helper()
		for name, tr := range trs {
			got := l.lines(dbRel("main", tr.ID))
			if !slices.Equal(got, want[tr.ID]) {
				t.Errorf("%s: %s session: %d lines stored, want %d (or they differ)", when, name, len(got), len(want[tr.ID]))
			}
		}
	}
	l.ingest(dir)
	check("first read")
	for name, n := range map[string]int{"small": 1, "large": 20} { // 0.2 MB held, 4.8 MB streamed
		tr := trs[name]
		before := len(tr.Lines())
		for range n {
			tr.User(big)
		}
		write(tr.ID, tr.Lines()[before:])
	}
	if rep := l.ingest(dir); rep.LinesIngested != 21 || rep.DBSourcesReplaced != 0 {
		t.Errorf("append: %d lines, %d re-read; want 21 and none", rep.LinesIngested, rep.DBSourcesReplaced)
	}
	check("after the append")
}

// TestDatabaseDigestDespiteScanProblems: a problem the scan meets on every
// run (a directory named like a transcript) is reported every time,
// but does not keep the digest from sparing the databases.
func TestDatabaseDigestDespiteScanProblems(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "agents", "main", "sessions", "5e000000-0000-4000-8000-0000000000ff.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := openLedger(t)
	store := &countingStore{DB: l.db}
	now := time.Now().Add(time.Hour) // the databases are quiet
	c := &collect.Collector{Store: store, FS: openclaw.OS, Now: func() time.Time { return now }}
	for i, wantLoads := range []int{1, 0, 0} {
		store.loads = 0
		rep, err := c.Run(context.Background(), []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		if store.loads != wantLoads || len(rep.Warnings) != 1 {
			t.Errorf("run %d: %d cursor loads, warnings %v; want %d loads and the directory's warning", i+1, store.loads, rep.Warnings, wantLoads)
		}
	}
}

// TestSQLiteEraRepairedEvent: an event holding a raw control character in
// a string (JSON.parse rejects it) is stored and decoded, and reported as
// repaired, as a transcript file's line is; text or compressed alike.
func TestSQLiteEraRepairedEvent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	l := openLedger(t)
	if rep := l.ingest(dir); rep.RepairedLines != 0 {
		t.Fatalf("the fixture has %d repaired lines: %+v", rep.RepairedLines, rep.Repaired)
	}
	db := openMain(t, dir)
	defer db.Close()
	var seqs []int64
	for _, compressed := range []bool{false, true} {
		seq, err := db.AppendEvent(fixture.EraLive, "{\"type\":\"message\",\"id\":\"ctrl0"+fmt.Sprint(len(seqs))+"\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"ctrl\x01char\"}}", compressed)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	rep := l.ingest(dir)
	if rep.RepairedLines != 2 || len(rep.Repaired) != 2 {
		t.Fatalf("repaired %d: %+v", rep.RepairedLines, rep.Repaired)
	}
	rel := dbRel("main", fixture.EraLive)
	for _, r := range rep.Repaired {
		if r.Path != rel || !strings.Contains(r.Error, "raw control characters") {
			t.Errorf("reported %+v, want %s", r, rel)
		}
	}
	if n := l.count(`SELECT count(*) FROM lines l JOIN sources s ON s.id = l.source_id
		WHERE s.rel_path = ? AND l.status = 3 AND l.role = 'user' AND l.text = ?`, rel, "ctrl\x01char"); n != 2 {
		t.Errorf("%d events stored as repaired user messages, want 2", n)
	}
}

// TestSQLiteEraCounts: a report's counters mean what they say. Files are
// files on disk, a database counting as one (ingested when any source in it
// was); the sessions, archives, run logs, indexes and cron jobs a database
// holds are counted apart: a first ingest never ingests more files than it
// scanned (2026.9.6 reported "21 scanned, 34 ingested").
func TestSQLiteEraCounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	tree := openclaw.Scan(openclaw.OS, dir)
	l := openLedger(t)
	rep := l.ingest(dir)
	if rep.FilesScanned != len(tree.Files)+len(tree.Databases) || rep.DatabasesScanned != len(tree.Databases) || len(tree.Databases) < 2 {
		t.Errorf("%d files scanned (%d databases); the tree has %d files and %d databases", rep.FilesScanned, rep.DatabasesScanned, len(tree.Files), len(tree.Databases))
	}
	// archive rows are database sources: EraPrevious's (its published file
	// is then only checked to hold the same transcript: not ingested) and
	// EraDeleted's (never published); EraFileOnly's file has no row
	const rows = 2
	if want := len(tree.Files) + len(tree.Databases) - 1; rep.FilesIngested != want || rep.FilesIngested > rep.FilesScanned {
		t.Errorf("%d files ingested of %d scanned, want %d", rep.FilesIngested, rep.FilesScanned, want)
	}
	if want := l.count(`SELECT count(*) FROM sources WHERE rel_path LIKE '%.sqlite#%'`) + rows; int64(rep.DBSourcesIngested) != want || rep.DBSourcesReplaced != 0 {
		t.Errorf("%d database sources ingested (%d re-read), want %d", rep.DBSourcesIngested, rep.DBSourcesReplaced, want)
	}
	again := l.ingest(dir)
	if again.FilesIngested != 0 || again.DBSourcesIngested != 0 || again.FilesScanned != rep.FilesScanned || again.DatabasesScanned != rep.DatabasesScanned {
		t.Errorf("no-op run: %+v", again)
	}
}

// TestDatabaseSourcesRegisteredAsStored: a first ingest registers an agent
// database's sessions, archive rows and session index with the files, in
// one call, before the files, in the order it stores them (databases
// first): transcripts' ids follow the order their lines are stored in,
// which a new ledger's first search index is fed in (clawledger.IndexFeed).
// An archive row published as a file of the tree is the file's source.
func TestDatabaseSourcesRegisteredAsStored(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	if _, err := fixture.WriteSQLiteEra(dir); err != nil {
		t.Fatal(err)
	}
	l := openLedger(t)
	store := &countingStore{DB: l.db}
	if _, err := (&collect.Collector{Store: store, FS: openclaw.OS}).Run(context.Background(), []string{dir}); err != nil {
		t.Fatal(err)
	}
	var agentOne int
	if err := l.raw.QueryRow(`SELECT count(*) FROM sources WHERE rel_path LIKE 'agents/%' AND id > (SELECT min(id) FROM sources WHERE rel_path LIKE 'state/%')`).Scan(&agentOne); err != nil {
		t.Fatal(err)
	}
	if agentOne != 0 || store.ensuredN == 0 {
		t.Errorf("%d agent sources registered after the plan's; %d at once", agentOne, store.ensuredN)
	}
	rows, err := l.raw.Query(`SELECT s.rel_path, min(l.id) FROM lines l JOIN sources s ON s.id = l.source_id
		WHERE s.kind = 'transcript' GROUP BY s.id ORDER BY s.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var last int64
	var n int
	for rows.Next() {
		var rel string
		var first int64
		if err := rows.Scan(&rel, &first); err != nil {
			t.Fatal(err)
		}
		if first < last {
			t.Errorf("%s: its first line stored before the sources below it", rel)
		}
		last, n = first, n+1
	}
	if err := rows.Err(); err != nil || n < 5 {
		t.Fatalf("%d sources with lines (%v)", n, err)
	}
}
