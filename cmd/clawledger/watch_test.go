//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/view"
)

// watchProc is a `clawledger watch` running in the background, its JSON
// log lines decoded as they come.
type watchProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	records chan map[string]any
	mu      sync.Mutex
	log     []string // every line, for failure messages
	exited  chan error
}

func startWatchProc(t *testing.T, c *cli, args ...string) *watchProc {
	t.Helper()
	cmd := c.command(append([]string{"watch", "--log-format", "json", "--verbose"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watchProc{t: t, cmd: cmd, records: make(chan map[string]any, 100000), exited: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.log = append(w.log, sc.Text())
			w.mu.Unlock()
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				rec = map[string]any{"msg": "not JSON: " + sc.Text()}
			}
			w.records <- rec
		}
		close(w.records)
		w.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-w.exited
		}
	})
	return w
}

func (w *watchProc) logText() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.log, "\n")
}

// batchMessages are the log messages that end a batch.
var batchMessages = map[string]bool{"ingested": true, "up to date": true}

// nextBatch waits for the log record that ends the next batch.
func (w *watchProc) nextBatch() map[string]any {
	w.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case rec, ok := <-w.records:
			if !ok {
				w.t.Fatalf("watch exited:\n%s", w.logText())
			}
			msg, _ := rec["msg"].(string)
			if rec["level"] == "ERROR" || strings.HasPrefix(msg, "not JSON") {
				w.t.Fatalf("watch logged %v\n%s", rec, w.logText())
			}
			if batchMessages[msg] {
				return rec
			}
		case <-deadline:
			w.t.Fatalf("no batch within 60 s:\n%s", w.logText())
		}
	}
}

// TestConcurrentWriter runs `watch` while a writer does to a state dir what
// OpenClaw does to it: appends lines (some in pieces, a partial line left
// while batches pass), truncates a transcript, repairs one in place (a
// .bak- copy, a temp file renamed over it), deletes one, soft-deletes
// another (rename to .deleted.<ts>), starts a new agent and appends to a
// cron run log. Readers query the ledger all along, an ingest and an
// episodes append write between the watch's batches, a second watch is
// turned away. Once the writer stops and the watch has caught up (a
// condition checked after each batch, not a sleep), the ledger must equal
// the final source exactly: export --all byte for byte, the deleted file
// kept and flagged gone, the soft-deleted one moved, not copied, and every
// session's derived facts equal to those of a fresh ingest of the final tree.
func TestConcurrentWriter(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".openclaw")
	sess := filepath.Join(dir, "agents", "main", "sessions")
	g := &tsWriter{t: t, rnd: rand.New(rand.NewSource(7))}
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, n := range names {
		g.create(filepath.Join(sess, n+"0000000-0000-4000-8000-000000000000.jsonl"), 4)
	}
	path := func(n string) string { return filepath.Join(sess, n+"0000000-0000-4000-8000-000000000000.jsonl") }
	cronLog := filepath.Join(dir, "cron", "runs", "job-1.jsonl")
	g.write(cronLog, `{"ts":1710403600000,"jobId":"job-1","action":"finished","status":"ok"}`+"\n")

	c := newCLI(t, home)
	db := filepath.Join(t.TempDir(), "ledger.db")
	w := startWatchProc(t, c, "--db", db, "--state", dir, "--debounce", "30ms", "--interval", "2s")
	if b := w.nextBatch(); b["reason"] != "start" {
		t.Fatalf("first batch: %v", b)
	}

	// a second watch is turned away, naming the first
	if _, errs, code := c.run("watch", "--db", db, "--state", dir); code != exitFailure || !strings.Contains(errs, "clawledger watch (pid") || !strings.Contains(errs, "already watching") {
		t.Fatalf("a second watch: exit %d, %q", code, errs)
	}

	// readers query the ledger while it is written
	stopReaders := make(chan struct{})
	var readers sync.WaitGroup
	var reads int
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stopReaders:
				return
			default:
			}
			for _, args := range [][]string{{"status", "--json"}, {"sessions", "--include-deleted", "--json"}, {"doctor", "--quick", "--json"}} {
				_, errs, code := c.run(append(args, "--db", db)...)
				if code != exitOK && !(args[0] == "doctor" && code == exitWarnings) {
					t.Errorf("clawledger %v during watch: exit %d: %s", args, code, errs)
					return
				}
				reads++
			}
		}
	}()

	var eFinal []byte
	for round := 0; round < 30; round++ {
		for k := g.rnd.Intn(3); k >= 0; k-- {
			g.write(path("a"), g.line("a"))
		}
		// b: one line in pieces, the first piece left while a batch passes
		line := g.line("b")
		cut := 1 + g.rnd.Intn(len(line)-2)
		g.write(path("b"), line[:cut])
		if round%3 == 0 {
			w.nextBatch()
		}
		g.write(path("b"), line[cut:])
		if round%3 == 0 {
			g.write(cronLog, fmt.Sprintf(`{"ts":%d,"jobId":"job-1","action":"finished","status":"ok","summary":"round %d"}`+"\n", 1710403600000+round, round))
		}
		switch round {
		case 8: // truncated to its first three lines (a rewrite that shrinks it), then written on
			g.truncateLines(path("c"), 3)
			g.write(path("c"), g.line("c"))
		case 10: // other writers take turns with the watch's batches
			c.mustRun(exitOK, "ingest", "--db", db, "--state", dir, "-q")
			c.mustRun(exitOK, "episodes", "append", "--db", db, "--scope", "test", "--session-id", "a0000000", "--agent-id", "main",
				"--type", "ops.observation", "--summary", "written while watch runs", "-q")
		case 12: // OpenClaw's repair: a .bak- copy, the cleaned file written to a temp file and renamed over it
			g.write(path("d"), "undefined\n"+g.line("d"))
			w.nextBatch()
			g.repair(path("d"))
		case 15: // deleted once the watch has stored all of it
			g.write(path("e"), g.line("e"))
			eFinal = g.read(path("e"))
			for !bytes.Equal(exportOne(t, c, db, "e0000000"), eFinal) {
				w.nextBatch()
			}
			if err := os.Remove(path("e")); err != nil {
				t.Fatal(err)
			}
		case 18: // soft delete
			if err := os.Rename(path("f"), path("f")+".deleted.2026-03-14T12-00-00.000Z"); err != nil {
				t.Fatal(err)
			}
		case 20: // a new agent starts
			g.create(filepath.Join(dir, "agents", "late", "sessions", "10000000-0000-4000-8000-000000000000.jsonl"), 2)
		case 24: // a partial line left at the end
			g.write(path("g"), g.line("g")[:25])
		}
		if round > 20 {
			g.write(filepath.Join(dir, "agents", "late", "sessions", "10000000-0000-4000-8000-000000000000.jsonl"), g.line("late"))
		}
	}

	// caught up: checked after every batch until it holds
	for !ledgerMirrors(t, c, db, dir) {
		w.nextBatch()
	}
	close(stopReaders)
	readers.Wait()

	// the deleted file: kept, flagged gone, out of export unless asked for
	if got := exportOne(t, c, db, "e0000000"); !bytes.Equal(got, eFinal) {
		t.Errorf("deleted transcript: ledger holds %d bytes, want %d", len(got), len(eFinal))
	}
	var list view.Sessions
	c.jsonOf(&list, exitOK, "sessions", "--include-deleted", "--db", db)
	flags := map[string]string{}
	for _, s := range list.Sessions {
		flags[s.Path] = flagString(s.Flags)
	}
	rel := func(p string) string { r, _ := filepath.Rel(dir, p); return filepath.ToSlash(r) }
	if f := flags[rel(path("e"))]; f != "orphan,gone" {
		t.Errorf("deleted transcript flags %q, want orphan,gone", f)
	}
	if f, ok := flags[rel(path("f"))+".deleted.2026-03-14T12-00-00.000Z"]; !ok || f != "deleted,orphan" {
		t.Errorf("soft-deleted transcript flags %q (listed: %v), want deleted,orphan", f, ok)
	}
	if _, ok := flags[rel(path("f"))]; ok {
		t.Errorf("the soft-deleted transcript is also listed under its old name")
	}

	// every present session's derived facts equal those of a fresh ingest
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	c.mustRun(exitOK, "ingest", "--db", fresh, "--state", dir, "-q")
	if got, want := sessionFacts(t, c, db), sessionFacts(t, c, fresh); got != want {
		t.Errorf("sessions kept current by watch differ from a fresh ingest:\n--- watch\n%s\n--- fresh\n%s", got, want)
	}

	// SIGTERM stops it cleanly
	w.cmd.Process.Signal(syscall.SIGTERM)
	for range w.records {
	}
	if err := <-w.exited; err != nil {
		t.Fatalf("watch after SIGTERM: %v\n%s", err, w.logText())
	}
	if !strings.Contains(w.logText(), `"msg":"stopped"`) {
		t.Fatalf("no stopped record:\n%s", w.logText())
	}
	t.Logf("%d reads by concurrent readers", reads)
	if testing.Verbose() {
		t.Log(w.logText())
	}
}

// ledgerMirrors reports whether export --all equals every transcript and
// run log on disk, up to its last newline.
func ledgerMirrors(t *testing.T, c *cli, db, dir string) bool {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export")
	c.mustRun(exitOK, "export", "--all", "--out", out, "--db", db)
	got := map[string][]byte{}
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			r, _ := filepath.Rel(filepath.Join(out, filepath.Base(dir)), p)
			got[filepath.ToSlash(r)], _ = os.ReadFile(p)
		}
		return err
	})
	files := openclaw.Scan(openclaw.OS, dir).Files
	n := 0
	for _, f := range files {
		if !f.Kind.HasLines() {
			continue
		}
		n++
		data, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Rel)))
		if !bytes.Equal(got[f.Rel], data[:bytes.LastIndexByte(data, '\n')+1]) {
			return false
		}
	}
	return n == len(got)
}

func exportOne(t *testing.T, c *cli, db, ref string) []byte {
	t.Helper()
	out, _, code := c.run("export", ref, "--db", db)
	if code != exitOK {
		return nil
	}
	return []byte(out)
}

// sessionFacts is the sessions list of a ledger (vanished files left out),
// in a stable order.
func sessionFacts(t *testing.T, c *cli, db string) string {
	t.Helper()
	var list view.Sessions
	c.jsonOf(&list, exitOK, "sessions", "--include-deleted", "--db", db)
	var lines []string
	for _, s := range list.Sessions {
		if s.Flags.Gone {
			continue
		}
		b, _ := json.Marshal(s)
		lines = append(lines, string(b))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// tsWriter writes transcripts the way OpenClaw does.
type tsWriter struct {
	t   *testing.T
	rnd *rand.Rand
	n   int
}

func (g *tsWriter) line(who string) string {
	g.n++
	role := []string{"user", "assistant"}[g.n%2]
	return fmt.Sprintf(`{"type":"message","id":"%s%07d","parentId":null,"timestamp":%d,"message":{"role":%q,"content":[{"type":"text","text":"line %d of %s, %s"}],"usage":{"input":%d,"output":%d}}}`+"\n",
		who[:1], g.n, 1795257397499+int64(g.n)*1000, role, g.n, who, strings.Repeat("x", g.rnd.Intn(300)), g.rnd.Intn(1000), g.rnd.Intn(100))
}

func (g *tsWriter) create(path string, lines int) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		g.t.Fatal(err)
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	s := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-11-21T10:36:37.499Z","cwd":"/w"}`+"\n", id)
	for i := 0; i < lines; i++ {
		s += g.line(id)
	}
	g.write(path, s)
}

func (g *tsWriter) write(path, s string) {
	g.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		g.t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		g.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		g.t.Fatal(err)
	}
}

func (g *tsWriter) read(path string) []byte {
	g.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		g.t.Fatal(err)
	}
	return b
}

// truncateLines cuts a file after its first n lines.
func (g *tsWriter) truncateLines(path string, n int) {
	g.t.Helper()
	b := g.read(path)
	end := 0
	for i := 0; i < n; i++ {
		end += bytes.IndexByte(b[end:], '\n') + 1
	}
	if err := os.Truncate(path, int64(end)); err != nil {
		g.t.Fatal(err)
	}
}

// repair does what OpenClaw's session file repair does: it drops the lines
// that do not parse, after a .bak-<pid>-<ms> copy, by writing the cleaned
// file to <file>.repair-<pid>-<ms>.tmp and renaming that over the file.
func (g *tsWriter) repair(path string) {
	g.t.Helper()
	b := g.read(path)
	var kept []byte
	for _, l := range bytes.SplitAfter(b, []byte{'\n'}) {
		if json.Valid(bytes.TrimSpace(l)) {
			kept = append(kept, l...)
		}
	}
	stamp := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixMilli())
	if err := os.WriteFile(path+".bak-"+stamp, b, 0o644); err != nil {
		g.t.Fatal(err)
	}
	tmp := path + ".repair-" + stamp + ".tmp"
	if err := os.WriteFile(tmp, kept, 0o644); err != nil {
		g.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		g.t.Fatal(err)
	}
}
