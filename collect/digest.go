package collect

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/clawledger/clawledger/openclaw"
)

// A no-op ingest stats every file and finds each as its source's cursor
// left it. Loading thousands of cursors to find that out costs more than
// the stats, so a run that leaves every source matching the files it saw
// records a digest of those files (their paths, device, inode, size and
// mtime, and the agents): while no source of the state dir changes (a
// trigger voids the digest when one does), a run that computes the same
// digest knows the ledger holds every file as it is, and loads nothing.

// digestVersion changes whenever what a digest covers changes.
const digestVersion = "files/1\n"

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
	for _, f := range t.Files {
		dev, ino := openclaw.FileID(f.Info)
		b = append(append(b[:0], f.Rel...), 0)
		b = binary.BigEndian.AppendUint64(b, dev)
		b = binary.BigEndian.AppendUint64(b, ino)
		b = binary.BigEndian.AppendUint64(b, uint64(f.Info.Size()))
		b = binary.BigEndian.AppendUint64(b, uint64(f.Info.ModTime().UnixNano()))
		h.Write(b)
	}
	return h.Sum(nil)
}

// filesDigest is the plan's digest when the run left every file's source
// matching the file as scanned (and nil when one does not: a file changed
// while it was read, could not be read, or was read only in part).
func (p *dirPlan) filesDigest() []byte {
	if len(p.tree.Databases) > 0 {
		return nil // database sources are checked by asking the database
	}
	for _, f := range p.tree.Files {
		if src := p.byRel[f.Rel]; src == nil || !unchanged(src, f.Info) {
			return nil
		}
	}
	return p.digest
}
