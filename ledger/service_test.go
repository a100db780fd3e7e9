package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/fixture"
	_ "github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

const sessionA = "a1000000-0000-4000-8000-000000000001"

var (
	edgeOnce sync.Once
	edgeDB   string
	edgeErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, db := range []string{edgeDB, readsDB} {
		if db != "" {
			os.RemoveAll(filepath.Dir(db))
		}
	}
	os.Exit(code)
}

// edgeService is a Service over a ledger holding the edge-case fixture,
// ingested once per test process and shared read-only.
func edgeService(t *testing.T) *Service {
	t.Helper()
	edgeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ledger-edge-")
		if err != nil {
			edgeErr = err
			return
		}
		m, err := fixture.WriteEdgeCases(filepath.Join(dir, "home"))
		if err != nil {
			edgeErr = err
			return
		}
		edgeDB = filepath.Join(dir, "ledger.db")
		s := service(t, edgeDB)
		s.StateDirs = func() ([]string, error) { return m.StateDirs, nil }
		_, edgeErr = s.Ingest(context.Background(), IngestRequest{})
	})
	if edgeErr != nil {
		t.Fatal(edgeErr)
	}
	return service(t, edgeDB)
}

// TestResolve: one resolver for session references. A reference matching
// nothing is not found; one matching several sessions is invalid and names
// them (show and search alike); a session's id names all its transcripts
// (search) and its live one (show); a prefix naming several transcripts of
// one session is enough for search, not for show.
func TestResolve(t *testing.T) {
	s := edgeService(t)
	ctx := context.Background()
	r, err := s.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref        string
		code       string // of resolve, "" when it resolves
		msg        string
		showCode   string // of transcript()
		transcript string // the path show picks
	}{
		{ref: "no-such-session", code: clawledger.ENOTFOUND, msg: `no session matches "no-such-session"`},
		{ref: "a", code: clawledger.EINVALID, msg: `"a" matches 5 sessions: a1000000-`},
		{ref: sessionA, transcript: "agents/main/sessions/" + sessionA + ".jsonl"},
		{ref: "a1000000", showCode: clawledger.EINVALID, msg: "name one by its path"},
		{ref: "agents/main/sessions/" + sessionA + ".jsonl", transcript: "agents/main/sessions/" + sessionA + ".jsonl"},
	} {
		sel, err := resolve(ctx, r, c.ref, "", nil)
		if clawledger.ErrorCode(err) != c.code || err != nil && !strings.Contains(err.Error(), c.msg) {
			t.Errorf("resolve(%q): %v, want code %q with %q", c.ref, err, c.code, c.msg)
			continue
		}
		if err != nil {
			if c.code == clawledger.ENOTFOUND && !errors.Is(err, clawledger.ErrNoSession) {
				t.Errorf("resolve(%q): not found without its reason: %v", c.ref, err)
			}
			continue
		}
		for _, tr := range sel.transcripts {
			if tr.SessionID != sel.transcripts[0].SessionID {
				t.Errorf("resolve(%q) mixes sessions: %s and %s", c.ref, tr.SessionID, sel.transcripts[0].SessionID)
			}
		}
		tr, err := sel.transcript()
		if clawledger.ErrorCode(err) != c.showCode || err != nil && !strings.Contains(err.Error(), c.msg) {
			t.Errorf("transcript(%q): %v, want code %q with %q", c.ref, err, c.showCode, c.msg)
		} else if err == nil && tr.Path != c.transcript {
			t.Errorf("transcript(%q) = %s, want %s", c.ref, tr.Path, c.transcript)
		}
	}
	sel, err := resolve(ctx, r, sessionA, "", nil)
	if err != nil || len(sel.sourceIDs()) < 2 {
		t.Errorf("a session id names all its transcripts: %v, %v", sel, err)
	}
}

// units is a ShowWriter that keeps what it is given.
type units struct {
	head  *view.ShowHead
	units []view.ShowUnit
}

func (c *units) Head(h *view.ShowHead) error { c.head = h; return nil }
func (c *units) Unit(u view.ShowUnit) error  { c.units = append(c.units, u); return nil }
func (c *units) lines() (out []int64) {
	for _, u := range c.units {
		out = append(out, u.Line())
	}
	return out
}

// TestShowPages: a transcript read page by page (After, Limit) is the
// transcript read whole, never splitting one line's items.
func TestShowPages(t *testing.T) {
	s := edgeService(t)
	ctx := context.Background()
	for _, filtered := range []bool{false, true} {
		whole := &units{}
		req := ShowRequest{Session: sessionA, AllBranches: true, Filtered: filtered}
		if err := s.Show(ctx, req, whole); err != nil {
			t.Fatal(err)
		}
		if len(whole.units) < 5 {
			t.Fatalf("filtered %v: %d units", filtered, len(whole.units))
		}
		var paged []view.ShowUnit
		for req.Limit, req.After = 2, 0; ; {
			page := &units{}
			if err := s.Show(ctx, req, page); err != nil {
				t.Fatal(err)
			}
			if len(page.units) == 0 {
				break
			}
			lines := page.lines()
			if len(lines) > req.Limit && lines[len(lines)-1] != lines[req.Limit-1] {
				t.Errorf("filtered %v: a page of %d units past its limit: lines %v", filtered, len(lines), lines)
			}
			paged = append(paged, page.units...)
			req.After = lines[len(lines)-1]
		}
		if len(paged) != len(whole.units) {
			t.Fatalf("filtered %v: %d units in pages, %d whole", filtered, len(paged), len(whole.units))
		}
		for i := range paged {
			if paged[i].Line() != whole.units[i].Line() {
				t.Errorf("filtered %v: unit %d from line %d in pages, %d whole", filtered, i, paged[i].Line(), whole.units[i].Line())
			}
		}
	}
	// nothing is written when the entry is not found
	out := &units{}
	err := s.Show(ctx, ShowRequest{Session: sessionA, Around: "nope", Context: 5}, out)
	if clawledger.ErrorCode(err) != clawledger.ENOTFOUND || out.head != nil {
		t.Errorf("--around nope: %v, head %v", err, out.head)
	}
}
