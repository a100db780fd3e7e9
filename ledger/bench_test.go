package ledger

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/sqlite"
	"github.com/clawledger/clawledger/view"
)

var (
	readsOnce sync.Once
	readsDB   string // a temporary ledger, removed by TestMain
	readsPath string // the ledger read
	readsIDs  []string
	readsErr  error
)

// readsLedger is a ledger of 5,000 sessions of 20 messages with its search
// index, the one internal/cmd/loadserve serves, written once per process
// (or kept at $CLAWLEDGER_BENCH_READS_DB, written when missing).
func readsLedger(b *testing.B) (string, []string) {
	readsOnce.Do(func() {
		path := os.Getenv("CLAWLEDGER_BENCH_READS_DB")
		if path == "" {
			dir, err := os.MkdirTemp("", "ledger-reads-")
			if err != nil {
				readsErr = err
				return
			}
			readsDB = filepath.Join(dir, "ledger.db")
			path = readsDB
		}
		ctx := context.Background()
		if _, err := os.Stat(path); err != nil {
			if readsErr = writeReadsLedger(ctx, path); readsErr != nil {
				return
			}
		} else if readsErr = migrate(ctx, path); readsErr != nil { // a reader would not
			return
		}
		loc, err := clawledger.ParseLocation(path)
		if err != nil {
			readsErr = err
			return
		}
		s := &Service{Location: loc, Name: "bench"}
		defer s.Close()
		list, err := s.Sessions(ctx, SessionsRequest{})
		if err != nil {
			readsErr = err
			return
		}
		for _, x := range list.Sessions {
			readsIDs = append(readsIDs, x.SessionID)
		}
		readsPath = path
	})
	if readsErr != nil {
		b.Fatal(readsErr)
	}
	return readsPath, readsIDs
}

func migrate(ctx context.Context, path string) error {
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return err
	}
	return db.Close()
}

// writeCorpus writes a ledger of n generated messages, perSession a
// session (internal/searchbench), without its search index.
func writeCorpus(ctx context.Context, path string, n, perSession int) error {
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return err
	}
	_, err = searchbench.NewGenerator(1).WriteCorpus(ctx, db, "", n, perSession)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeReadsLedger(ctx context.Context, path string) error {
	if err := writeCorpus(ctx, path, 100_000, 20); err != nil {
		return err
	}
	loc, err := clawledger.ParseLocation(path)
	if err != nil {
		return err
	}
	s := &Service{Location: loc, Name: "bench"}
	defer s.Close()
	_, err = s.Reindex(ctx)
	return err
}

type discardShow struct{}

func (discardShow) Head(*view.ShowHead) error { return nil }
func (discardShow) Unit(view.ShowUnit) error  { return nil }

// BenchmarkReads times, one at a time, the service calls the web server's
// API makes (internal/cmd/loadserve's mix) on a ledger of 5,000 sessions:
// what each costs alone, without the web server's one-second cache.
func BenchmarkReads(b *testing.B) {
	path, ids := readsLedger(b)
	loc, err := clawledger.ParseLocation(path)
	if err != nil {
		b.Fatal(err)
	}
	s := &Service{Location: loc, Name: "bench"}
	defer s.Close()
	ctx := context.Background()
	search := SearchDefaults()
	search.Query = "kubernetes"
	usage := UsageDefaults()
	usage.Timezone = "UTC"
	for _, bc := range []struct {
		name string
		call func(i int) error
	}{
		{"sessions-50", func(int) error { _, err := s.Sessions(ctx, SessionsRequest{Limit: 50}); return err }},
		{"sessions-all", func(int) error { _, err := s.Sessions(ctx, SessionsRequest{}); return err }},
		{"show", func(i int) error {
			req := ShowDefaults()
			req.Session = ids[i*7919%len(ids)]
			return s.Show(ctx, req, discardShow{})
		}},
		{"show-filtered", func(i int) error {
			req := ShowDefaults()
			req.Session, req.Filtered = ids[i*7919%len(ids)], true
			return s.Show(ctx, req, discardShow{})
		}},
		{"show-prefix", func(i int) error {
			req := ShowDefaults()
			req.Session = ids[i*7919%len(ids)][:8]
			return s.Show(ctx, req, discardShow{})
		}},
		{"usage-daily", func(int) error { _, err := s.Usage(ctx, usage); return err }},
		{"tools", func(int) error { _, err := s.Tools(ctx, ToolsRequest{}); return err }},
		{"search", func(int) error { _, err := s.Search(ctx, search); return err }},
		{"status", func(int) error { _, err := s.Status(ctx, StatusRequest{}); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := bc.call(i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearchHybrid is one hybrid search through the service over
// 20,000 messages embedded in 384 dimensions (static model): the vector
// matrix is kept across searches while the vectors stay the same.
func BenchmarkSearchHybrid(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	path := filepath.Join(dir, "ledger.db")
	err := writeCorpus(ctx, path, 20_000, 20)
	if err == nil {
		err = searchbench.NewGenerator(1).WriteModel(filepath.Join(dir, "model"), 384)
	}
	if err != nil {
		b.Fatal(err)
	}
	loc, err := clawledger.ParseLocation(path)
	if err != nil {
		b.Fatal(err)
	}
	s := &Service{Location: loc, Name: "bench"}
	defer s.Close()
	if _, err := s.Reindex(ctx); err != nil {
		b.Fatal(err)
	}
	embed := EmbedDefaults()
	embed.Provider, embed.ModelDir = "static", filepath.Join(dir, "model")
	if _, err := s.Embed(ctx, embed); err != nil {
		b.Fatal(err)
	}
	req := SearchDefaults()
	req.Query, req.Mode = "kubernetes", "hybrid"
	for b.Loop() {
		if _, err := s.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
