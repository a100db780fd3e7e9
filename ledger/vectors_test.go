package ledger

import (
	"context"
	"math/rand"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/search"
)

// loads counts the vector loads of the ledgers opened through the
// "vloads" scheme (the SQLite backend underneath): by the chunk id each
// load starts after.
var loads = struct {
	sync.Mutex
	after []int64
}{}

func init() { clawledger.RegisterBackend("vloads", vloads{}) }

type vloads struct{}

func (vloads) inner(loc clawledger.Location) clawledger.Location {
	l, err := clawledger.ParseLocation(loc.URL.Path)
	if err != nil {
		panic(err)
	}
	return l
}
func (vloads) Locate(loc *clawledger.Location) error { return nil }
func (b vloads) Open(ctx context.Context, loc clawledger.Location, opt clawledger.OpenOptions) (clawledger.Store, error) {
	st, err := b.inner(loc).Open(ctx, opt)
	if err != nil {
		return nil, err
	}
	return countingStore{st}, nil
}
func (b vloads) Watching(ctx context.Context, loc clawledger.Location) (clawledger.Holder, bool) {
	return b.inner(loc).Watching(ctx)
}
func (b vloads) LockWatch(ctx context.Context, loc clawledger.Location, me clawledger.Holder, wait time.Duration) (interface{ Unlock() error }, error) {
	return b.inner(loc).LockWatch(ctx, me, wait)
}

type countingStore struct{ clawledger.Store }

func (c countingStore) LoadVectors(ctx context.Context, x clawledger.VectorSink) error {
	return c.LoadVectorsAfter(ctx, x, 0)
}
func (c countingStore) VectorRange(ctx context.Context) (int64, int64, error) {
	return c.Store.(clawledger.VectorLoader).VectorRange(ctx)
}
func (c countingStore) LoadVectorsAfter(ctx context.Context, x clawledger.VectorSink, after int64) error {
	loads.Lock()
	loads.after = append(loads.after, after)
	loads.Unlock()
	return c.Store.(clawledger.VectorLoader).LoadVectorsAfter(ctx, x, after)
}

func takeLoads() []int64 {
	loads.Lock()
	defer loads.Unlock()
	out := loads.after
	loads.after = nil
	return out
}

// TestVectorMatrixKept: a Service keeps the vector matrix across searches.
// Searches over unchanged vectors load none; new vectors (a query's refresh
// embeds a new transcript with the static model) are loaded alone and found;
// a rebuild of the index has the matrix loaded whole again.
func TestVectorMatrixKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := filepath.Join(dir, "home", ".openclaw")
	if err := fixture.WriteSample(state); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model")
	words := []string{"[PAD]", "[UNK]", "backup", "backups", "copies", "release", "shipping", "eastore", "disk", "zanzibar"}
	rows := [][]float32{{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 0, 1, 0}, {0, 0, 0, 0, 1}}
	if err := searchbench.WriteStaticModel(model, words, rows); err != nil {
		t.Fatal(err)
	}
	s := service(t, "vloads://"+filepath.Join(dir, "ledger.db"))
	s.StateDirs = func() ([]string, error) { return []string{state}, nil }
	if _, err := s.Ingest(ctx, IngestRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Embed(ctx, EmbedRequest{Config: embed.Config{Provider: embed.ProviderStatic, ModelDir: model}, CacheMaxMB: 1}); err != nil {
		t.Fatal(err)
	}
	takeLoads()
	vsearch := func(q string, refresh Refresh) *search.Result {
		t.Helper()
		req := SearchDefaults()
		req.Query, req.Mode, req.Refresh = q, search.ModeVector, refresh
		res, err := s.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Result
	}
	first := vsearch("copies", Refresh{})
	if got := takeLoads(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("first search: loads after %v, want one whole load", got)
	}
	for range 3 {
		vsearch("copies", Refresh{})
	}
	if got := takeLoads(); len(got) != 0 {
		t.Errorf("searches over unchanged vectors loaded %v", got)
	}

	// a new transcript: the query's refresh indexes and embeds it
	tr := fixture.NewTranscript(rand.New(rand.NewSource(1)), "99999999-0000-4000-8000-000000000099", 3, fixture.Base.Add(200*time.Hour), "/tmp")
	tr.User("zanzibar zanzibar")
	if err := tr.Write(filepath.Join(state, "agents", "main", "sessions", tr.ID+".jsonl")); err != nil {
		t.Fatal(err)
	}
	res := vsearch("zanzibar", QueryRefresh())
	if got := takeLoads(); len(got) != 1 || got[0] == 0 {
		t.Errorf("after new vectors: loads after %v, want one load of the new ones", got)
	}
	if len(res.Hits) == 0 || res.Hits[0].SessionID != tr.ID || res.VectorChunks != first.VectorChunks+1 {
		t.Errorf("the new vector: %d chunks (was %d), hits %+v", res.VectorChunks, first.VectorChunks, res.Hits)
	}

	if _, err := s.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	res = vsearch("zanzibar", Refresh{})
	if got := takeLoads(); len(got) != 1 || got[0] != 0 {
		t.Errorf("after a rebuild: loads after %v, want one whole load", got)
	}
	if len(res.Hits) == 0 || res.Hits[0].SessionID != tr.ID || res.VectorChunks != first.VectorChunks+1 {
		t.Errorf("after a rebuild: %d chunks, hits %+v", res.VectorChunks, res.Hits)
	}
}
