package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/sqlitedriver"

	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/testenv"
	"github.com/clawledger/clawledger/view"
)

// TestDoctor: doctor finds a healthy ledger healthy (exit 0); after damage
// from outside (a transcript rewritten in place, an orphaned row, a stored
// line altered, a stored line deleted) and an append, it reports each with
// what to run (exit 3); --fix repairs what it can and reads the rest again.
func TestDoctor(t *testing.T) {
	home := t.TempDir()
	if _, err := fixture.WriteEdgeCases(home); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(exitWarnings, "ingest")
	c.golden("doctor-healthy", c.mustRun(exitOK, "doctor", "--json"))

	sess := filepath.Join(home, ".openclaw", "agents", "main", "sessions")
	rewrite := filepath.Join(sess, "b1000000-0000-4000-8000-000000000002.jsonl")
	data, err := os.ReadFile(rewrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rewrite, []byte(strings.Replace(string(data), "Old session", "OLD SESSION", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// altered in the middle, where an ingest does not look (same size, same first and last KiB)
	alter := filepath.Join(sess, "a1000000-0000-4000-8000-000000000001.jsonl")
	if data, err = os.ReadFile(alter); err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(data), "Try the other approach"); i < 2048 || len(data)-i < 2048 {
		t.Fatalf("the altered bytes must lie past the first KiB and before the last (at %d of %d)", i, len(data))
	}
	if err := os.WriteFile(alter, []byte(strings.Replace(string(data), "Try the other approach", "TRY THE OTHER APPROACH", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.AppendFile(t, filepath.Join(sess, "c1000000-0000-4000-8000-000000000003.jsonl"), `{"type":"message","id":"n1","parentId":null,"message":{"role":"user","content":"new"}}`+"\n")
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(filepath.Join(home, ".local", "share", "clawledger", "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO tool_calls(line_id, idx, source_id) VALUES(999999, 0, 1)`,
		`UPDATE lines SET raw = CAST(replace(CAST(raw AS TEXT), 'v4 says hi', 'V4 SAYS HI') AS BLOB)
			WHERE source_id = (SELECT id FROM sources WHERE rel_path LIKE '%d1000000%.jsonl')`,
		`DELETE FROM lines WHERE id = (SELECT max(l.id) FROM lines l JOIN sources s ON s.id = l.source_id WHERE s.rel_path LIKE '%e1000000%.jsonl')`,
	} {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	c.golden("doctor", c.mustRun(exitWarnings, "doctor", "--json"))
	c.golden("doctor-text", c.mustRun(exitWarnings, "doctor"))
	c.golden("doctor-quick", c.mustRun(exitWarnings, "doctor", "--quick", "--json"))

	// an ingest re-reads the rewritten file but cannot see the altered one
	c.mustRun(exitWarnings, "ingest")
	var d view.Doctor
	c.jsonOf(&d, exitWarnings, "doctor")
	if len(d.Actions) != 1 || d.Actions[0] != "clawledger doctor --fix" {
		t.Fatalf("after an ingest: %+v", d)
	}

	// --fix deletes the orphan, resets the inconsistent and altered sources
	// and reads them again: healthy, and the ledger equals the files
	c.mustRun(exitOK, "doctor", "--fix")
	c.jsonOf(&d, exitOK, "doctor")
	if !d.Healthy || len(d.Actions) != 0 {
		t.Fatalf("after --fix: %+v", d)
	}
	out := filepath.Join(t.TempDir(), "export")
	c.mustRun(exitOK, "export", "--all", "--out", out)
	for _, p := range []string{alter, rewrite} {
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(home, p)
		if got, _ := os.ReadFile(filepath.Join(out, rel)); !bytes.Equal(got, data) {
			t.Errorf("%s: the ledger does not hold the file as it is", rel)
		}
	}
}

// TestDoctorSQLiteEra: sources held in OpenClaw databases (transcripts as
// events, archives stored from their rows) are healthy after an ingest; a
// stored event altered in the ledger is found, and --fix reads the session
// from its database again.
func TestDoctorSQLiteEra(t *testing.T) {
	home := t.TempDir()
	if _, err := fixture.WriteSQLiteEra(filepath.Join(home, ".openclaw")); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, home)
	c.mustRun(exitOK, "ingest")
	var d view.Doctor
	c.jsonOf(&d, exitOK, "doctor")
	if !d.Healthy || len(d.Findings) != 0 {
		t.Fatalf("after an ingest: %+v", d.Findings)
	}
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(filepath.Join(home, ".local", "share", "clawledger", "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE lines SET raw = CAST(replace(CAST(raw AS TEXT), '"type"', '"TYPE"') AS BLOB)
		WHERE source_id = (SELECT id FROM sources WHERE rel_path = ?)`, "agents/main/agent/openclaw-agent.sqlite#"+fixture.EraLive); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c.jsonOf(&d, exitWarnings, "doctor")
	if len(d.Findings) != 1 || d.Findings[0].Check != "stored_lines" {
		t.Fatalf("after altering stored events: %+v", d.Findings)
	}
	c.mustRun(exitOK, "doctor", "--fix")
	c.jsonOf(&d, exitOK, "doctor")
	if !d.Healthy || len(d.Findings) != 0 {
		t.Fatalf("after --fix: %+v", d.Findings)
	}
}
