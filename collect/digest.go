package collect

import (
	"crypto/sha256"
	"encoding/binary"
	"io/fs"
	"time"

	"github.com/clawledger/clawledger/openclaw"
)

// A no-op ingest stats every file and finds each as its source's cursor
// left it. Loading thousands of cursors to find that out costs more than
// the stats, so a run that leaves every source matching the files it saw
// records a digest of those files (their paths, device, inode, size and
// mtime, and the agents), and of the databases and their -wal files: while
// no source of the state dir changes (a trigger voids the digest when one
// does), a run that computes the same digest knows the ledger holds every
// file and database as it is, and loads nothing, nor opens a database.

// digestVersion changes whenever what a digest covers changes.
const digestVersion = "files/2\n"

// quietTime is how long before a scan a database must have been left
// alone for the run to record a digest with it. File times are coarse (a
// clock tick), so a database written again within the tick its last write
// took would keep its mtime, and a -wal file started over keeps its size:
// once its mtime is quietTime old, any later write moves it.
const quietTime = 2 * time.Second

// filesDigest digests what a scan found of a state dir's files.
func filesDigest(t *openclaw.Tree) []byte {
	h := sha256.New()
	h.Write([]byte(digestVersion))
	var b []byte
	for _, a := range t.Agents {
		b = append(append(b[:0], a...), 0)
		h.Write(b)
	}
	h.Write([]byte{0})
	file := func(rel string, fi fs.FileInfo) {
		b = append(append(b[:0], rel...), 0)
		if fi != nil {
			dev, ino := openclaw.FileID(fi)
			b = binary.BigEndian.AppendUint64(b, dev)
			b = binary.BigEndian.AppendUint64(b, ino)
			b = binary.BigEndian.AppendUint64(b, uint64(fi.Size()))
			b = binary.BigEndian.AppendUint64(b, uint64(fi.ModTime().UnixNano()))
		}
		h.Write(b)
	}
	for _, f := range t.Files {
		file(f.Rel, f.Info)
	}
	h.Write([]byte{0})
	for _, d := range t.Databases {
		file(d.Rel, d.Info)
		file(d.Rel+"-wal", d.WAL)
	}
	return h.Sum(nil)
}

// filesDigest is the plan's digest when the run left every file's source
// matching the file as scanned (or the file remembered as failed as it
// is, failures.go), and read every database without a warning
// (rep's warnings about the dir since its scan), each left alone for
// quietTime before the scan; nil otherwise (a file changed while it was
// read, could not be read, or was read only in part; a database could not
// be read, or is being written).
func (p *dirPlan) filesDigest(rep *Report) []byte {
	if len(p.tree.Databases) > 0 {
		for _, w := range rep.Warnings[p.warnedFrom:] {
			if w.StateDir == p.dir {
				return nil
			}
		}
		quiet := p.scanned.Add(-quietTime)
		for _, d := range p.tree.Databases {
			if !d.Info.ModTime().Before(quiet) || d.WAL != nil && !d.WAL.ModTime().Before(quiet) {
				return nil
			}
		}
	}
	for _, f := range p.tree.Files {
		if src := p.byRel[f.Rel]; (src == nil || !unchanged(src, f.Info)) && !p.failed.unchanged(f.Rel, f.Info) {
			return nil
		}
	}
	return p.digest
}
