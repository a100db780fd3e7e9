// Package ledger holds the ledger's use cases, once, for every surface:
// the CLI, the HTTP API and MCP call a Service and show the view values it
// returns (package view); none of them touches a store. A Service works on
// a ledger of any backend (clawledger.Location) through the store
// interfaces of the module root.
//
// A Service is safe for concurrent use: what a call may do beside
// answering (refresh the ledger first, call the network, index a backlog)
// comes with the call, in its request, never from the Service's state.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/view"
)

// Service answers the ledger's use cases. Its fields are set once, before
// the first call.
type Service struct {
	// Location is the ledger.
	Location clawledger.Location
	// StateDirs returns the OpenClaw state dirs to read: the given ones,
	// else those discovered.
	StateDirs func() ([]string, error)
	// Getenv reads the environment: the embedder's configuration and key.
	Getenv func(string) string
	// NewCollector returns the collector an ingest runs, drawing progress
	// on p (nil: none); the Service sets its Store. Nil: a collector of the
	// file system.
	NewCollector func(p collect.Progress) *collect.Collector
	// Observer is shown progress and what a call did beside its answer;
	// nil shows nothing.
	Observer Observer
	// Name says who the Service's writers are, for another writer's
	// message ("ingest", "serve").
	Name string
	// LockWait is how long a writer waits for another writer to finish.
	LockWait time.Duration
	// SampleDir is where Ingest writes the bundled sample state dir when
	// no state dir exists.
	SampleDir string

	mu       sync.Mutex
	reader   clawledger.Store    // the shared read-only store, once open
	embedder clawledger.Embedder // opened once
	embedCfg embed.Config
	matrix   matrixCache // the vector matrix, kept across searches
}

// Diagnose returns err with reason clawledger.ErrDamaged when it says the
// ledger is damaged (Location.Diagnose), else err: surfaces call it on the
// errors they report.
func (s *Service) Diagnose(err error) error { return s.Location.Diagnose(err) }

// Close closes the shared reader.
func (s *Service) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reader == nil {
		return nil
	}
	err := s.reader.Close()
	s.reader = nil
	return err
}

// read returns the ledger opened for reading, shared by every call (a
// read-only store is safe for concurrent use). A ledger that does not
// exist is an error with reason clawledger.ErrNoLedger.
func (s *Service) read(ctx context.Context) (clawledger.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reader != nil {
		return s.reader, nil
	}
	st, err := s.Location.Open(ctx, clawledger.OpenOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	s.reader = st
	return st, nil
}

// write opens the ledger as its one writer, waiting up to LockWait for
// another writer to finish; existing: never create one.
func (s *Service) write(ctx context.Context, existing bool) (clawledger.Store, error) {
	return s.writeAs(ctx, s.Name, existing)
}

func (s *Service) writeAs(ctx context.Context, name string, existing bool) (clawledger.Store, error) {
	return s.open(ctx, clawledger.OpenOptions{Writer: clawledger.Holder{Command: name}, Existing: existing, LockWait: s.LockWait})
}

// open opens the ledger as its one writer.
func (s *Service) open(ctx context.Context, opt clawledger.OpenOptions) (clawledger.Store, error) {
	st, err := s.Location.Open(ctx, opt)
	return st, s.gaveUp(err)
}

// gaveUp completes the error of a writer that gave up waiting.
func (s *Service) gaveUp(err error) error {
	if le := (*clawledger.LockedError)(nil); errors.As(err, &le) && !le.Watch {
		return fmt.Errorf("%w and did not finish within %s; try again when it is done", le, s.LockWait)
	}
	return err
}

func (s *Service) stateDirs() ([]string, error) {
	if s.StateDirs == nil {
		return nil, nil
	}
	return s.StateDirs()
}

func (s *Service) getenv(k string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(k)
}

// collector returns a collector drawing progress on p (its Store to be set).
func (s *Service) collector(p collect.Progress) *collect.Collector {
	if s.NewCollector != nil {
		return s.NewCollector(p)
	}
	return &collect.Collector{FS: openclaw.OS, Progress: p}
}

// Observer is shown what a call does beside its answer. The CLI draws its
// bars and prints its notes on stderr; a server logs them. Its methods may
// be called from concurrent calls.
type Observer interface {
	// Progress returns a progress bar for a long task (see the Task
	// constants), or nil to show none.
	Progress(task string) Progress
	// RefreshSkipped says why a query's refresh did not run.
	RefreshSkipped(reason string)
	// Refreshed gives the report of a query's refresh (its warnings).
	Refreshed(rep *collect.Report)
	// EmbedFailed says new chunks were not embedded (the text index is
	// current regardless); onQuery: on a query's refresh.
	EmbedFailed(err error, onQuery bool)
	// Captured gives the report of the episodic capture after an ingest.
	Captured(rep *episodes.CaptureReport)
	// UsingSample says no state dir exists and the bundled sample in dir
	// is ingested instead.
	UsingSample(dir string)
	// SampleDropped says a real state dir was found and the bundled sample
	// an earlier ingest read was removed from the ledger.
	SampleDropped(f *view.Forget)
	// StateDirMissing says a state dir the ledger holds no longer exists:
	// it is not read, and its data is kept.
	StateDirMissing(dir string)
	// MemoryIndexUnreadable says OpenClaw's memory index at path could not
	// be read: its search hits are kept as they were.
	MemoryIndexUnreadable(path string, err error)
}

// Progress follows a long task.
type Progress interface {
	Start(total int64)
	Add(n int64)
	Finish()
}

// Tasks a progress bar is asked for: of bytes (ingesting, verifying
// files), else of lines or chunks.
const (
	TaskIngest      = "ingesting"
	TaskIndex       = "indexing"
	TaskEmbed       = "embedding"
	TaskCapture     = "capturing lines"
	TaskVerifyFiles = "verifying files"
	TaskVerifyLines = "verifying stored lines"
)

// NopObserver shows nothing; embed it to implement part of Observer.
type NopObserver struct{}

func (NopObserver) Progress(string) Progress            { return nil }
func (NopObserver) RefreshSkipped(string)               {}
func (NopObserver) Refreshed(*collect.Report)           {}
func (NopObserver) EmbedFailed(error, bool)             {}
func (NopObserver) Captured(*episodes.CaptureReport)    {}
func (NopObserver) UsingSample(string)                  {}
func (NopObserver) SampleDropped(*view.Forget)          {}
func (NopObserver) StateDirMissing(string)              {}
func (NopObserver) MemoryIndexUnreadable(string, error) {}

func (s *Service) observer() Observer {
	if s.Observer == nil {
		return NopObserver{}
	}
	return s.Observer
}

// progress returns the Observer's bar for a task, or one that shows nothing.
func (s *Service) progress(task string) Progress {
	if p := s.observer().Progress(task); p != nil {
		return p
	}
	return nopProgress{}
}

type nopProgress struct{}

func (nopProgress) Start(int64) {}
func (nopProgress) Add(int64)   {}
func (nopProgress) Finish()     {}

// optionalBar is the Observer's bar for a task as the search package takes
// it: nil when none is shown.
func (s *Service) optionalBar(task string) Progress {
	return s.observer().Progress(task)
}

// bar is progress as the collector and capture take it (they count files
// too).
type bar struct{ Progress }

func (b bar) Start(total int64, _ int) { b.Progress.Start(total) }

// ingestBar is the collector's progress: nil when none is shown.
func (s *Service) ingestBar() collect.Progress {
	if p := s.optionalBar(TaskIngest); p != nil {
		return bar{p}
	}
	return nil
}
