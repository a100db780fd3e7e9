package ledger

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/cortex"
	"github.com/clawledger/clawledger/search"
)

// indexFeed is a new ledger's first search index, built apart from what
// the import stores as it stores it (clawledger.IndexFeeder): the import
// leaves most of a core idle (its storing goroutine is the bound), and
// the feed chunks and writes there what the index used to read back
// after it. The cortex runs while the feed finishes (deriveApart).
type indexFeed struct {
	build  clawledger.ApartIndex
	feed   *search.Feed
	detach func()
	closed bool
}

// feedIndex opens the build and attaches its feed to the writer before
// the collector runs; nil when the store feeds none, the ingest leaves
// the index for later, or the ledger holds an index or a line already.
func feedIndex(ctx context.Context, st clawledger.Store, noIndex bool) (*indexFeed, error) {
	feeder, ok := st.(clawledger.IndexFeeder)
	if !ok || noIndex {
		return nil, nil
	}
	b, err := feeder.BuildIndexApart(ctx)
	if err != nil || b == nil {
		return nil, err
	}
	f := &indexFeed{build: b, feed: search.StartFeed(ctx, b)}
	if f.detach, err = feeder.FeedIndex(ctx, f.feed); err != nil || f.detach == nil {
		return nil, errors.Join(err, f.close())
	}
	return f, nil
}

// importDone detaches the feed from the writer: the import is stored.
func (f *indexFeed) importDone() {
	if f != nil && f.detach != nil {
		f.detach()
		f.detach = nil
	}
}

// close ends the feed and discards the build (after its install, or
// instead of it).
func (f *indexFeed) close() error {
	if f == nil || f.closed {
		return nil
	}
	f.importDone()
	f.closed = true
	f.feed.Stop()
	return f.build.Close()
}

// cortexFeed is a new ledger's first cortex, derived from what the import
// stores as it stores it (clawledger.CortexFeeder): the cortex's update
// after the import then reads back only the transcripts the feed did not
// take whole (updateCortex). What the feed derived waits in a file beside
// the ledger (spillFile).
type cortexFeed struct {
	feed   *cortex.Feed
	spill  *spillFile
	detach func()
}

// CortexSpillSuffix names the file a fed cortex waits in beside its
// ledger.
const CortexSpillSuffix = ".cortex-feed"

// feedCortex attaches a cortex feed to the writer before the collector
// runs; nil when the store feeds none, the ingest leaves the derived
// layers for later, or the ledger holds a line or a cortex already.
func feedCortex(ctx context.Context, st clawledger.Store, ledgerPath string, noIndex bool) (*cortexFeed, error) {
	feeder, ok := st.(clawledger.CortexFeeder)
	b := builder(st)
	if !ok || b == nil || noIndex || ledgerPath == "" {
		return nil, nil
	}
	spill := &spillFile{path: ledgerPath + CortexSpillSuffix}
	f := &cortexFeed{feed: cortex.StartFeed(ctx, b.Options, spill), spill: spill}
	var err error
	if f.detach, err = feeder.FeedCortex(ctx, f.feed); err != nil || f.detach == nil {
		return nil, errors.Join(err, f.close())
	}
	return f, nil
}

// derived is what the feed derived, for the cortex's update (nil: none).
func (f *cortexFeed) derived() *cortex.Feed {
	if f == nil {
		return nil
	}
	return f.feed
}

// importDone detaches the feed from the writer: the import is stored.
func (f *cortexFeed) importDone() {
	if f != nil && f.detach != nil {
		f.detach()
		f.detach = nil
	}
}

// close ends the feed and removes its file (after the cortex's update, or
// instead of it).
func (f *cortexFeed) close() error {
	if f == nil || f.spill == nil {
		return nil
	}
	f.importDone()
	f.feed.Stop()
	err := f.spill.close()
	f.spill = nil
	return err
}

// spillFile is the file a fed cortex waits in (cortex.Spill), beside the
// ledger, mode 0600, created by the feed's first write (a killed
// ingest's replaced) and removed at once where the system lets an open
// file go, else once the cortex is stored.
type spillFile struct {
	path string
	f    *os.File
}

func (s *spillFile) Write(p []byte) (int, error) {
	if s.f == nil {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return 0, err
		}
		s.f = f
		_ = os.Remove(s.path)
	}
	return s.f.Write(p)
}

func (s *spillFile) ReadAt(p []byte, off int64) (int, error) {
	if s.f == nil {
		return 0, io.EOF
	}
	return s.f.ReadAt(p, off)
}

func (s *spillFile) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}
