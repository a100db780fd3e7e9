package ledger

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/sqlite"
)

// TestExportStaysInside: names that come from inside OpenClaw's databases
// (session ids, job ids) never make export --all write outside its
// directory, and two sources that export to one path do not overwrite
// each other.
func TestExportStaysInside(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{Writer: clawledger.Holder{Command: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	state := filepath.Join(dir, "home", ".openclaw")
	id, err := db.StateDirID(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{
		"agents/main/agent/openclaw-agent.sqlite#../../../../../escaped",
		"state/openclaw.sqlite#cron/runs/../../../../x.jsonl",
		"agents/main/sessions/s1.jsonl",
		"agents/main/agent/openclaw-agent.sqlite#s1",
	} {
		src, err := db.EnsureSource(ctx, &clawledger.Source{StateDirID: id, Rel: rel, Kind: clawledger.KindTranscript, Class: clawledger.ClassLive})
		if err != nil {
			t.Fatal(err)
		}
		tx, sess, err := db.Begin(ctx, src, clawledger.Append)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Add(&clawledger.Record{Line: clawledger.Line{Offset: 0, No: 1, Raw: []byte(`{"from":"` + rel + `"}`)}}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(clawledger.Cursor{Offset: 1, Lines: 1, Size: 1, MtimeNs: 1}, sess); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "deep", "x")
	res, err := service(t, db.Path).Export(ctx, ExportRequest{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 1 || len(res.Skipped) != 3 {
		t.Fatalf("exported %d files, skipped %+v", res.Files, res.Skipped)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".jsonl" {
			if rel, _ := filepath.Rel(out, p); !filepath.IsLocal(rel) {
				t.Errorf("export wrote outside its directory: %s", p)
			}
		}
		return nil
	})
}

// service is a Service over the SQLite ledger at path.
func service(t *testing.T, path string) *Service {
	t.Helper()
	loc, err := clawledger.ParseLocation(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Location: loc, Name: "test"}
	t.Cleanup(func() { s.Close() })
	return s
}
