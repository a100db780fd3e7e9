package ledger

import (
	"context"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sample"
	"github.com/clawledger/clawledger/sqlite"
)

// importLog records, in order, how a ledger was opened and the first of
// its calls that end an import or read for a derived layer.
type importLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *importLog) add(call string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.calls, call) {
		l.calls = append(l.calls, call)
	}
}

// importRecorder is the SQLite backend, recording in its log.
type importRecorder struct{ log *importLog }

func (importRecorder) Locate(loc *clawledger.Location) error {
	p, err := url.PathUnescape(loc.URL.Opaque)
	loc.Path = p
	return err
}

func (b importRecorder) Open(ctx context.Context, loc clawledger.Location, opt clawledger.OpenOptions) (clawledger.Store, error) {
	if opt.ReadOnly {
		return sqlite.Open(ctx, loc.Path, sqlite.Options(opt))
	}
	db, err := sqlite.Open(ctx, loc.Path, sqlite.Options(opt))
	if err != nil {
		return nil, err
	}
	if opt.Import {
		b.log.add("open to import")
	}
	return recordedDB{db, b.log}, nil
}

func (importRecorder) Watching(_ context.Context, loc clawledger.Location) (clawledger.Holder, bool) {
	return sqlite.Watching(loc.Path)
}

func (importRecorder) LockWatch(ctx context.Context, loc clawledger.Location, me clawledger.Holder, wait time.Duration) (interface{ Unlock() error }, error) {
	return sqlite.LockWatch(ctx, loc.Path, me, wait)
}

type recordedDB struct {
	*sqlite.DB
	log *importLog
}

func (d recordedDB) EndImport(ctx context.Context) error {
	d.log.add("end import")
	return d.DB.EndImport(ctx)
}

func (d recordedDB) CortexSources(ctx context.Context, all bool) ([]*clawledger.CortexSource, bool, error) {
	d.log.add("cortex sources")
	return d.DB.CortexSources(ctx, all)
}

func (d recordedDB) CortexLines(ctx context.Context, sourceID, after int64, limit int) ([]clawledger.CortexLine, error) {
	d.log.add("cortex")
	return d.DB.CortexLines(ctx, sourceID, after, limit)
}

// FeedCortex records a cortex feed attached to the writer.
func (d recordedDB) FeedCortex(ctx context.Context, feed clawledger.CortexFeed) (func(), error) {
	detach, err := d.DB.FeedCortex(ctx, feed)
	if detach != nil {
		d.log.add("feed cortex")
	}
	return detach, err
}

func (d recordedDB) TranscriptDocs(ctx context.Context, src *clawledger.IndexSource, after int64, limit int) ([]clawledger.SearchDoc, []int64, error) {
	d.log.add("index")
	return d.DB.TranscriptDocs(ctx, src, after, limit)
}

// BuildIndexApart records a build apart, and its reads as the index's.
func (d recordedDB) BuildIndexApart(ctx context.Context) (clawledger.ApartIndex, error) {
	b, err := d.DB.BuildIndexApart(ctx)
	if b == nil {
		return nil, err
	}
	d.log.add("build apart")
	return recordedApart{b, d.log}, err
}

// FeedIndex records a feed attached to the writer.
func (d recordedDB) FeedIndex(ctx context.Context, feed clawledger.IndexFeed) (func(), error) {
	detach, err := d.DB.FeedIndex(ctx, feed)
	if detach != nil {
		d.log.add("feed")
	}
	return detach, err
}

type recordedApart struct {
	clawledger.ApartIndex
	log *importLog
}

func (b recordedApart) TranscriptDocs(ctx context.Context, src *clawledger.IndexSource, after int64, limit int) ([]clawledger.SearchDoc, []int64, error) {
	b.log.add("index")
	return b.ApartIndex.TranscriptDocs(ctx, src, after, limit)
}

func (b recordedApart) Install(ctx context.Context) error {
	b.log.add("install")
	return b.ApartIndex.Install(ctx)
}

var (
	registerRecorder sync.Once
	recorderLog      importLog
)

// TestImportBeforeDerived: an ingest, and a query's refresh, open the
// ledger to import into it and end the import before the derived layers
// read it (in SQLite's rollback-journal mode a reader on another
// connection would hold the layers' own commits up). An ingest opens the
// first search index's build apart and feeds it from the import (reading
// no line back: no "index"), feeds the first cortex too (no "cortex"),
// finishes the build beside the cortex's update and installs it once both
// are done; a query's refresh derives one layer after the other.
func TestImportBeforeDerived(t *testing.T) {
	log := &recorderLog
	registerRecorder.Do(func() { clawledger.RegisterBackend("importrec", importRecorder{log}) })
	for _, c := range []struct {
		name string
		run  func(*Service) error
		want []string // in order, but for the pair at once
	}{
		{"ingest", func(s *Service) error {
			_, err := s.Ingest(context.Background(), IngestRequest{})
			return err
		}, []string{"open to import", "build apart", "feed", "feed cortex", "end import", "cortex sources", "install"}},
		{"a query's refresh", func(s *Service) error {
			req := UsageDefaults()
			req.Refresh = Refresh{Ingest: true}
			_, err := s.Usage(context.Background(), req)
			return err
		}, []string{"open to import", "end import", "cortex sources", "cortex", "index"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			log.mu.Lock()
			log.calls = nil
			log.mu.Unlock()
			tmp := t.TempDir()
			loc, err := clawledger.ParseLocation("importrec:" + url.PathEscape(filepath.Join(tmp, "ledger.db")))
			if err != nil {
				t.Fatal(err)
			}
			sampleDir := filepath.Join(tmp, "sample")
			s := &Service{Location: loc, Name: "test", SampleDir: sampleDir,
				StateDirs: func() ([]string, error) { return nil, nil }}
			if c.name != "ingest" { // a query reads no sample: give it a state dir
				dir := filepath.Join(tmp, "state")
				if err := sample.Write(dir); err != nil {
					t.Fatal(err)
				}
				s.StateDirs = func() ([]string, error) { return []string{dir}, nil }
			}
			defer s.Close()
			if err := c.run(s); err != nil {
				t.Fatal(err)
			}
			if !filepath.IsAbs(loc.Path) || filepath.Dir(loc.Path) != tmp {
				t.Fatalf("the ledger is at %s, not in %s", loc.Path, tmp)
			}
			got := slices.Clone(log.calls)
			for i, w := range c.want { // a pair at once is in either order
				if a, b, pair := strings.Cut(w, "|"); pair && i+1 < len(got) && got[i] == b && got[i+1] == a {
					got[i], got[i+1] = a, b
				}
			}
			if want := strings.Split(strings.Join(c.want, "|"), "|"); !slices.Equal(got, want) {
				t.Errorf("calls %q, want %q", log.calls, c.want)
			}
		})
	}
}
