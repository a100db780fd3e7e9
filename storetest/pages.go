package storetest

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/openclaw"
)

// pageSize is small, so that each list takes several pages, and odd, so
// that pages end between two rows of one time.
const pageSize = 3

// testKeysetPages: the long lists (cron runs and tool failures newest
// first, events oldest first) page by keyset: each page read after the
// last row of the one before holds every row once, none lost, ties on time
// broken by id, also when rows were stored between two pages (rows a
// newest-first list shows before its first page stay out; older ones come
// in their place).
func testKeysetPages(t *testing.T, h *harness) {
	dir := filepath.Join(t.TempDir(), ".openclaw")
	put := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ingest := func() {
		t.Helper()
		if _, err := (&collect.Collector{Store: h.writer(), FS: openclaw.OS}).Run(h.ctx, []string{dir}); err != nil {
			t.Fatal(err)
		}
		h.flush()
	}
	// cron runs, two at each time
	var runs strings.Builder
	addRuns := func(from, to int, base int64) string {
		for i := from; i < to; i++ {
			fmt.Fprintf(&runs, `{"ts":%d,"jobId":"job-1","action":"finished","status":"error","error":"failure %d"}`+"\n", base+int64(i/2)*1000, i)
		}
		return runs.String()
	}
	put("cron/runs/job-1.jsonl", addRuns(0, 7, 1773478800000))
	// tool failures: two transcripts on the same clock fail at the same
	// times (calls of their own: not copies of one)
	failing := func(name string, start time.Time, n int) *fixture.Transcript {
		tr := fixture.NewTranscript(rand.New(rand.NewSource(1)), name, 3, start, "/srv")
		for i := range n {
			tr.ToolResult(fmt.Sprintf("%s-%d", name, i), "exec", "boom", true, nil)
		}
		return tr
	}
	a, b := failing("a", fixture.Base, 3), failing("b", fixture.Base, 3)
	put("agents/main/sessions/a.jsonl", string(a.Bytes()))
	put("agents/main/sessions/b.jsonl", string(b.Bytes()))
	// events, two at each time
	for i := range 7 {
		h.appendEvent("s", "sess-1", clawledger.EventDecision, fmt.Sprintf("event %d", i), "", int64(1_700_000_000_000+i/2))
	}
	ingest()
	r := h.reader()

	// between the first two pages, rows newer than any and older than any
	appendRuns := func() {
		addRuns(7, 9, 1773478900000)
		put("cron/runs/job-1.jsonl", addRuns(9, 11, 1773478000000))
		ingest()
	}
	checkPages(t, "cron runs", true, appendRuns, func(after *clawledger.Keyset, limit int) ([]clawledger.Keyset, error) {
		list, err := r.CronRuns(h.ctx, clawledger.CronFilter{Limit: limit, After: after})
		return keysOf(list, func(x *clawledger.CronRunRecord) clawledger.Keyset { return clawledger.Keyset{Ts: x.Ts, ID: x.ID} }), err
	})
	appendFailures := func() {
		for _, tr := range []*fixture.Transcript{a, b} {
			tr.ToolResult(tr.ID+"-new", "exec", "boom", true, nil)
		}
		put("agents/main/sessions/a.jsonl", string(a.Bytes()))
		put("agents/main/sessions/b.jsonl", string(b.Bytes()))
		put("agents/main/sessions/old.jsonl", string(failing("old", fixture.Base.Add(-time.Hour), 2).Bytes()))
		ingest()
	}
	checkPages(t, "tool failures", true, appendFailures, func(after *clawledger.Keyset, limit int) ([]clawledger.Keyset, error) {
		list, err := r.ToolFailures(h.ctx, clawledger.ToolFilter{Tool: "exec", Limit: limit, After: after})
		return keysOf(list, func(x *clawledger.ToolFailure) clawledger.Keyset { return clawledger.Keyset{Ts: x.Ts, ID: x.ID} }), err
	})
	appendEvents := func() {
		h.appendEvent("s", "sess-1", clawledger.EventDecision, "newest", "", 1_700_000_000_100)
		h.appendEvent("s", "sess-1", clawledger.EventDecision, "oldest", "", 1_600_000_000_000)
		h.flush()
	}
	checkPages(t, "events", false, appendEvents, func(after *clawledger.Keyset, limit int) ([]clawledger.Keyset, error) {
		list, _, err := r.Events(h.ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Scope: "s"}, Limit: limit, After: after})
		return keysOf(list, func(x *clawledger.Event) clawledger.Keyset { return clawledger.Keyset{Ts: x.TsMs, ID: x.Seq} }), err
	})
}

// keysOf is the keyset of each row of a page.
func keysOf[T any](list []T, key func(T) clawledger.Keyset) []clawledger.Keyset {
	out := make([]clawledger.Keyset, 0, len(list))
	for _, x := range list {
		out = append(out, key(x))
	}
	return out
}

// checkPages reads a list page after page until a page is short, calling
// between after the first, and checks that the rows come in the list's
// order (desc: newest first), none twice, and that every row the list held
// before between is read.
func checkPages(t *testing.T, what string, desc bool, between func(), page func(after *clawledger.Keyset, limit int) ([]clawledger.Keyset, error)) {
	t.Helper()
	all, err := page(nil, 0) // the list as it was, whole
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var got []clawledger.Keyset
	var after *clawledger.Keyset
	for n := 0; ; n++ {
		list, err := page(after, pageSize)
		if err != nil {
			t.Fatalf("%s, page %d: %v", what, n+1, err)
		}
		if len(list) > pageSize {
			t.Fatalf("%s, page %d: %d rows, over the limit of %d", what, n+1, len(list), pageSize)
		}
		got = append(got, list...)
		if len(list) < pageSize {
			break
		}
		if n > 2*len(all) {
			t.Fatalf("%s: page %d and still no end (pages %v)", what, n+1, got[:min(len(got), 20)])
		}
		after = &list[len(list)-1]
		if n == 0 {
			between()
		}
	}
	seen := map[int64]bool{}
	for i, k := range got {
		if seen[k.ID] {
			t.Errorf("%s: row %d read twice (pages %v)", what, k.ID, got)
		}
		seen[k.ID] = true
		if i > 0 {
			p := got[i-1]
			ordered := p.Ts < k.Ts || p.Ts == k.Ts && p.ID < k.ID
			if desc {
				ordered = p.Ts > k.Ts || p.Ts == k.Ts && p.ID > k.ID
			}
			if !ordered {
				t.Errorf("%s: %+v after %+v, out of order", what, k, p)
			}
		}
	}
	for _, k := range all {
		if !seen[k.ID] {
			t.Errorf("%s: row %+v lost between pages (pages %v)", what, k, got)
		}
	}
	if len(all) < 2*pageSize {
		t.Errorf("%s: %d rows before, want several pages", what, len(all))
	}
}
