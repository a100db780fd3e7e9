package postgres_test

import (
	"context"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/search"
)

// TestSearchMetaCached: a search through the postings reads the search
// layer's settings with its first round trip, so the check of a setting
// taken from the cache before it costs no round trip of its own (a
// cancelled context answers it); a setting another store changed is seen
// by the next such search, one this store changed is read again, and a
// search the postings do not answer leaves the check a read.
func TestSearchMetaCached(t *testing.T) {
	ctx := context.Background()
	w, _, _, dsn := sealedCorpus(t)
	check(t, w.SetSearchMeta(ctx, "embedder", "a"))

	r := openPG(t, dsn, "r")
	q, err := search.Parse("the")
	check(t, err)
	passes := 0
	defer postgres.SetPostingsHook(func(string, []int64) { passes++ })()
	lexical := func(f *clawledger.SearchFilter) {
		t.Helper()
		_, _, _, err := r.LexicalSnapshot(ctx, q, f, 50)
		check(t, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	// current asks SearchMetaCurrent with no round trip allowed
	current := func(v string, stamp uint64) bool {
		t.Helper()
		same, err := r.SearchMetaCurrent(cancelled, "embedder", v, stamp)
		check(t, err)
		return same
	}

	if _, _, ok := r.CachedSearchMeta("embedder"); ok {
		t.Fatal("a value cached before any read")
	}
	lexical(&clawledger.SearchFilter{})
	if passes == 0 {
		t.Fatal("the postings did not answer")
	}
	v, stamp, ok := r.CachedSearchMeta("embedder")
	if !ok || v != "a" {
		t.Fatalf("cached %q, %v after a search; want a", v, ok)
	}
	lexical(&clawledger.SearchFilter{})
	if !current(v, stamp) {
		t.Fatal("the setting not current after a search that read it")
	}

	// another store (process) changes it: the next search sees it
	check(t, w.SetSearchMeta(ctx, "embedder", "b"))
	v, stamp, _ = r.CachedSearchMeta("embedder")
	lexical(&clawledger.SearchFilter{})
	if v != "a" || current(v, stamp) {
		t.Fatalf("cached %q, still current after another store changed it", v)
	}
	if v, _, _ := r.CachedSearchMeta("embedder"); v != "b" {
		t.Fatalf("cached %q after the search, want b", v)
	}

	// this store changes it: nothing cached until read again
	check(t, r.SetSearchMeta(ctx, "embedder", "c"))
	if _, _, ok := r.CachedSearchMeta("embedder"); ok {
		t.Fatal("a value cached after this store changed it")
	}
	lexical(&clawledger.SearchFilter{})
	v, stamp, _ = r.CachedSearchMeta("embedder")
	if v != "c" {
		t.Fatalf("cached %q, want c", v)
	}

	// a search the postings do not answer (a filter) reads nothing of it:
	// the check is a round trip
	lexical(&clawledger.SearchFilter{Role: "user"})
	if _, err := r.SearchMetaCurrent(cancelled, "embedder", v, stamp); err == nil {
		t.Fatal("checked with no round trip after a search that did not read the settings")
	}
	if same, err := r.SearchMetaCurrent(ctx, "embedder", v, stamp); err != nil || !same {
		t.Fatalf("current %v, %v; want true", same, err)
	}
}
