package main

import (
	"fmt"
	"path/filepath"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/episodes"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// observer shows what the service does beside its answers: progress bars
// on a terminal, and on stderr what a query's refresh did (with
// --verbose) or what an ingest could not do.
type observer struct{ a *app }

// Progress draws a bar on a terminal: of bytes ingested or hashed, else
// of lines or chunks.
func (o observer) Progress(task string) ledger.Progress {
	if !o.a.interactive() {
		return nil
	}
	lines := task != ledger.TaskIngest && task != ledger.TaskVerifyFiles
	return &barProgress{w: o.a.stderr, description: task, lines: lines}
}

func (o observer) RefreshSkipped(reason string) {
	if o.a.verbose {
		o.a.warnf("not refreshing: %s\n", reason)
	}
}

func (o observer) Refreshed(rep *collect.Report) {
	if o.a.verbose {
		o.a.printWarnings(rep)
	}
}

// EmbedFailed: an ingest (or reindex) whose new chunks were not embedded
// exits 3; a query's refresh says so with --verbose only.
func (o observer) EmbedFailed(err error, onQuery bool) {
	if o.a.verbose || !onQuery {
		o.a.warnf("warning: embeddings: %s\n", hinted(err))
	}
	if !onQuery {
		o.a.exitCode = exitWarnings
	}
}

func (o observer) Captured(rep *episodes.CaptureReport) {
	if o.a.verbose {
		o.a.warnf("episodes: captured %d new event(s) from %d line(s)\n", rep.Inserted, rep.Lines)
	}
}

// SampleDropped is said whatever the command: the ledger lost data.
func (o observer) SampleDropped(f *view.Forget) {
	o.a.warnf("A real OpenClaw state dir was found: the bundled sample (%s) was removed from the ledger (%d sessions, %d lines).\n",
		f.StateDir, f.Sessions, f.Lines)
}

func (o observer) StateDirMissing(dir string) {
	o.a.warnf("warning: the ledger holds %s, which no longer exists: not read, its data kept (`clawledger forget %s` removes it)\n", dir, dir)
}

func (o observer) MemoryIndexUnreadable(path string, err error) {
	o.a.warnOnce("memory index "+path+": "+err.Error(),
		"warning: OpenClaw's memory index %s cannot be read (%v): its search hits are kept as they were\n", path, err)
}

func (o observer) UsingSample(dir string) {
	o.a.warnf("No OpenClaw state directory found (looked for $OPENCLAW_STATE_DIR, ~/.openclaw, ~/.openclaw-*, ~/.clawdbot, ~/.moltbot, ~/.moldbot).\nIngesting the bundled sample state dir instead: %s\n", dir)
}

// printWarnings lists what a run could not read or decode, each with its
// file (and line).
func (a *app) printWarnings(r *collect.Report) {
	for _, w := range r.Warnings {
		a.warnf("warning: %s: %s\n", location(w.StateDir, w.Path, w.Line), w.Message)
	}
	for _, m := range r.Malformed {
		a.warnf("warning: %s: malformed line stored as-is: %s\n", location(m.StateDir, m.Path, m.Line), m.Error)
	}
	if more := r.MalformedLines - int64(len(r.Malformed)); more > 0 {
		a.warnf("warning: %d more malformed line(s) stored as-is; `clawledger status` lists them all\n", more)
	}
	for _, m := range r.Repaired {
		a.warnf("note: %s: %s\n", location(m.StateDir, m.Path, m.Line), m.Error)
	}
}

// location is FILE or FILE:LINE.
func location(stateDir, rel string, line int64) string {
	p := filepath.Join(stateDir, filepath.FromSlash(rel))
	if line > 0 {
		return fmt.Sprintf("%s:%d", p, line)
	}
	return p
}
