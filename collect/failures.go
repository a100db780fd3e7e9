package collect

import (
	"context"
	"errors"
	"io/fs"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// A file read whole (a session index, cron/jobs.json or its state sidecar,
// a workspace file) that cannot be used as it is (it does not parse, nests
// deeper than openclaw.MaxJSONDepth, or is over its size cap) would be read
// again by every run, however big it is, and would keep the state dir from
// ever recording its digest (digest.go). It is remembered instead, by its
// fingerprint (device, inode, size, mtime, as unchanged compares a
// cursor): until the file changes no run reads it again, each reports the
// remembered warning, and the file counts as seen for the digest.

// contentError is a fileError about what a file holds: remembered as a
// failure of the file as fi describes it.
type contentError struct {
	err error
	fi  fs.FileInfo
}

func (e *contentError) Error() string { return e.err.Error() }
func (e *contentError) Unwrap() error { return e.err }

// failures are a state dir's remembered failures, by path.
type failures map[string]clawledger.FileFailure

// unchanged reports whether the file at rel is remembered as failed as fi
// describes it.
func (fl failures) unchanged(rel string, fi fs.FileInfo) bool {
	f, ok := fl[rel]
	if !ok || fi == nil {
		return false
	}
	dev, ino := openclaw.FileID(fi)
	return f.Dev == dev && f.Inode == ino && f.Size == fi.Size() && f.MtimeNs == fi.ModTime().UnixNano()
}

// loadFailures loads the state dir's remembered failures and reports those
// whose file is unchanged, each as the warning it first was.
func (c *Collector) loadFailures(ctx context.Context, id int64, dir string, tree *openclaw.Tree, rep *Report) (failures, error) {
	list, err := c.Store.Failures(ctx, id)
	if err != nil {
		return nil, err
	}
	fl := make(failures, len(list))
	for _, f := range list {
		fl[f.Rel] = f
	}
	if len(fl) == 0 {
		return fl, nil
	}
	for _, f := range tree.Files {
		if fl.unchanged(f.Rel, f.Info) {
			c.warn(rep, dir, f.Rel, "%s (unchanged since; not read again until it changes)", fl[f.Rel].Message)
		}
	}
	return fl, nil
}

// remember records that a source's file failed as ce says, and reports it.
func (c *Collector) remember(ctx context.Context, p *dirPlan, src *clawledger.Source, ce *contentError, rep *Report) error {
	c.warn(rep, p.dir, src.Rel, "%v", ce.err)
	dev, ino := openclaw.FileID(ce.fi)
	f := clawledger.FileFailure{SourceID: src.ID, Rel: src.Rel, Dev: dev, Inode: ino, Size: ce.fi.Size(),
		MtimeNs: ce.fi.ModTime().UnixNano(), Message: ce.err.Error()}
	if err := c.Store.SetFailure(ctx, src.ID, &f); err != nil {
		return err
	}
	p.failed[src.Rel] = f
	return nil
}

// forget drops a source's remembered failure, if any: its file was read,
// or is gone.
func (c *Collector) forget(ctx context.Context, p *dirPlan, src *clawledger.Source) error {
	if _, ok := p.failed[src.Rel]; !ok {
		return nil
	}
	delete(p.failed, src.Rel)
	return c.Store.SetFailure(ctx, src.ID, nil)
}

// handled records the outcome of reading a file read whole: a content
// error is remembered (and reported), success forgets a failure; the
// error returned is what the caller still has to handle.
func (c *Collector) handled(ctx context.Context, p *dirPlan, src *clawledger.Source, err error, rep *Report) error {
	var ce *contentError
	switch {
	case err == nil:
		return c.forget(ctx, p, src)
	case errors.As(err, &ce):
		return c.remember(ctx, p, src, ce, rep)
	}
	return err
}
