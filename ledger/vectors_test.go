package ledger

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/search"
)

// TestVectorMatrixKept: the service loads the vector matrix once for
// searches after searches, and again when the stored vectors change
// (here: a switch to another model re-embeds every chunk); each search
// answers as a service that loads it afresh does.
func TestVectorMatrixKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	if err := writeCorpus(ctx, path, 400, 20); err != nil {
		t.Fatal(err)
	}
	models := []string{filepath.Join(dir, "model-a"), filepath.Join(dir, "model-b")}
	for i, m := range models {
		if err := searchbench.NewGenerator(int64(i+1)).WriteModel(m, 16+8*i); err != nil {
			t.Fatal(err)
		}
	}
	s := service(t, path)
	embed := func(model string) {
		t.Helper()
		req := EmbedDefaults()
		req.Provider, req.ModelDir = "static", model
		if _, err := s.Embed(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	req := SearchDefaults()
	req.Query, req.Mode = "kubernetes", search.ModeHybrid
	check := func(loads int) {
		t.Helper()
		got, err := s.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if s.matrix.loads != loads {
			t.Errorf("the matrix was loaded %d times, want %d", s.matrix.loads, loads)
		}
		fresh := service(t, path)
		want, err := fresh.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("kept matrix: %+v\nloaded afresh: %+v", got, want)
		}
	}
	if _, err := s.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	embed(models[0])
	check(1)
	check(1)
	embed(models[1])
	check(2)
	check(2)
}
