package cortex_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/indexdigest"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// dump renders every cortex table, rows in key order
// (indexdigest.CortexQueries, but for the summaries' word instances): two
// cortexes are the same when their dumps are. The states are left out: a
// transcript derived from its start stores a short one, an update the
// whole state, and both resume alike (TestIncrementalEqualsRebuild
// resumes from both).
func (l *ledger) dump() string {
	l.t.Helper()
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(l.db.Path, "_pragma=query_only(1)"))
	if err != nil {
		l.t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	for _, q := range indexdigest.CortexQueries {
		if strings.Contains(q, "cortex_states") || strings.Contains(q, "temp.vocab") {
			continue
		}
		rows, err := db.Query(q)
		if err != nil {
			l.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		fmt.Fprintf(&b, "%s\n", q)
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				l.t.Fatal(err)
			}
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%s=%v\t", cols[i], v)
			}
			b.WriteByte('\n')
		}
		if err := rows.Close(); err != nil {
			l.t.Fatal(err)
		}
	}
	return b.String()
}

// queryRow scans one row of a query of the ledger.
func (l *ledger) queryRow(q string, dest ...any) {
	l.t.Helper()
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(l.db.Path, "_pragma=query_only(1)"))
	if err != nil {
		l.t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(q).Scan(dest...); err != nil {
		l.t.Fatal(err)
	}
}

// states counts the short states stored (a transcript's open episode
// derived again when it grows) and the whole ones.
func (l *ledger) states() (short, whole int) {
	l.queryRow(`SELECT count(*) FILTER (WHERE instr(state, '"open":') = 0 AND instr(state, '"reopen":') > 0),
		count(*) FILTER (WHERE instr(state, '"open":') > 0) FROM cortex_states`, &short, &whole)
	return short, whole
}

// transcriptLines is how many transcript lines the ledger holds.
func (l *ledger) transcriptLines() (n int64) {
	l.queryRow(`SELECT count(*) FROM lines WHERE source_id IN (SELECT id FROM sources WHERE kind = 'transcript')`, &n)
	return n
}

// firstDiff is the first line two dumps differ on.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  incremental: %.400s\n  rebuild:     %.400s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(al), len(bl))
}

// TestIncrementalEqualsRebuild grows the fixture in steps, updating the
// cortex after each ingest (in small batches, so that derivation resumes
// from stored state mid-episode and mid-transcript: the first update, a
// whole build, stores short states, the next ones resume from them and
// store whole ones), then replaces a transcript and changes an index entry;
// a rebuild from the ledger must then write exactly the rows the updates
// wrote. Both storage eras.
func TestIncrementalEqualsRebuild(t *testing.T) {
	for _, era := range fixture.Eras {
		t.Run(era.Name, func(t *testing.T) {
			m := fixture.NewCortex(filepath.Join(t.TempDir(), ".openclaw"), fixture.CortexOptions{Sessions: 12, Seed: 3, SQLite: era.SQLite})
			l := newLedger(t, m.StateDir)
			small := cortex.Options{}
			b := l.builder(small)
			b.BatchLines = 7
			var derived int64 // lines, each counted once (a short state's open episode is read again, not counted)
			for i, frac := range []int{1, 2, 3, 5} {
				if err := m.Write(func(s *fixture.CortexSession) int { return len(s.Lines) * frac / 5 }); err != nil {
					t.Fatal(err)
				}
				l.ingest()
				st, err := b.Update(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				derived += st.Lines
				if short, whole := l.states(); i == 0 && (short == 0 || whole > 0) || i > 0 && whole == 0 {
					t.Fatalf("after update %d: %d short states, %d whole ones", i+1, short, whole)
				}
			}
			if n := l.transcriptLines(); derived != n {
				t.Errorf("the updates derived %d lines, the ledger holds %d", derived, n)
			}
			if st := l.update(small); st != (cortex.Stats{}) {
				t.Errorf("an update with nothing new did %+v", st)
			}
			full := l.episodes()

			// a transcript replaced: its episodes are derived again
			s := m.Sessions[0]
			replaced := append(append([]string{}, s.Lines[:len(s.Lines)/2]...), s.Lines[len(s.Lines)-3:]...)
			replace(t, m, s, replaced)
			// an index entry naming a session's peer differently
			renamePeer(t, m, m.Sessions[1])
			l.ingest()
			if st := l.update(small); st.Sources != 2 || st.Lines < int64(len(replaced)) {
				t.Errorf("the update after a replacement and an index change derived %d transcripts, %d lines; want 2, at least %d",
					st.Sources, st.Lines, len(replaced))
			}
			if got := l.episodes()[s.ID]; len(got) == 0 || len(got) >= len(full[s.ID]) && len(full[s.ID]) > 1 {
				t.Errorf("replaced transcript: %d episodes, had %d", len(got), len(full[s.ID]))
			}
			incremental := l.dump()
			if !strings.Contains(incremental, "telegram:9999") {
				t.Error("the changed index entry's peer is not in the cortex")
			}
			l.rebuild(small)
			if rebuilt := l.dump(); rebuilt != incremental {
				t.Errorf("rebuild differs from the incremental updates: %s", firstDiff(incremental, rebuilt))
			}
		})
	}
}

// replace rewrites a session's transcript with other lines, as a repair
// or a rewind does.
func replace(t *testing.T, m *fixture.CortexManifest, s *fixture.CortexSession, lines []string) {
	t.Helper()
	path := filepath.Join(m.StateDir, filepath.FromSlash(m.Path(s)))
	if !m.SQLite {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	db, err := fixture.OpenEraDB(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keep := int64(len(s.Lines)/2 - 1)
	if err := db.Rewrite(s.ID, keep, "rewound", lines[keep+1:]); err != nil {
		t.Fatal(err)
	}
}

// renamePeer changes the session key of a session's index entry.
func renamePeer(t *testing.T, m *fixture.CortexManifest, s *fixture.CortexSession) {
	t.Helper()
	key := "agent:" + s.Agent + ":telegram:direct:9999"
	if !m.SQLite {
		path := filepath.Join(m.StateDir, "agents", s.Agent, "sessions", "sessions.json")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.Replace(string(data), `"`+s.Key+`"`, `"`+key+`"`, 1))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	db, err := fixture.OpenEraDB(filepath.Join(m.StateDir, filepath.FromSlash(m.Path(s))), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// as OpenClaw does, with a newer update time
	for _, q := range []string{`UPDATE session_windows SET session_key = ?, updated_at = updated_at + 1 WHERE session_id = ?`,
		`UPDATE session_nodes SET session_key = ?, updated_at = updated_at + 1 WHERE current_session_id = ?`} {
		if _, err := db.Exec(q, key, s.ID); err != nil {
			t.Fatal(err)
		}
	}
}
