package collect

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
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

// The digest also covers what the audit trail read of the dir's files: a
// footprint (footprint.go) whose paths it keeps after its sum, so that the
// next run looks at them again.

// digestVersion changes whenever what a digest covers changes.
const digestVersion = "files/3\n"

// quietTime is how long before a scan a database must have been left
// alone for the run to record a digest with it. File times are coarse (a
// clock tick), so a database written again within the tick its last write
// took would keep its mtime, and a -wal file started over keeps its size:
// once its mtime is quietTime old, any later write moves it.
const quietTime = 2 * time.Second

// filesDigest digests what a scan found of a state dir's files and what
// the audit trail found of those it looked at (foot): the sum, then the
// paths of foot.
func filesDigest(t *openclaw.Tree, foot []footEntry) []byte {
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
	h.Write([]byte{0})
	keys := make([]string, len(foot))
	for i, e := range foot {
		keys[i] = e.key
		h.Write([]byte(e.key + "\x00" + e.found + "\x00"))
	}
	paths, _ := json.Marshal(keys) // strings always encode
	return append(h.Sum(nil), paths...)
}

// footprintKeys returns the paths of the footprint a digest covers.
func footprintKeys(digest []byte) []string {
	var keys []string
	if len(digest) > sha256.Size && json.Unmarshal(digest[sha256.Size:], &keys) == nil {
		return keys
	}
	return nil
}

// filesDigest is the plan's digest when the run left every file's source
// matching the file as scanned (or the file remembered as failed as it
// is, failures.go), and read every database without a warning
// (rep's warnings about the dir since its scan), each left alone for
// quietTime before the scan; nil otherwise (a file changed while it was
// read, could not be read, or was read only in part; a database could not
// be read, or is being written).
func (p *dirPlan) filesDigest(rep *Report) []byte {
	digest := filesDigest(p.tree, p.foot)
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
	return digest
}
